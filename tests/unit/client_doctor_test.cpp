// `pybox doctor`'s client side (client/doctor.cpp): the daemon check, the checks when the daemon
// does not answer, the exit code, the report and its JSON; and docs/doctor.md's exit codes.
#include "client/commands.hpp"
#include "client/daemon_connection.hpp"
#include "tests/support/build_paths.hpp"

#include "tests/support/sample_answers.hpp"
#include "tests/support/source_text.hpp"

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

namespace {

using namespace pybox;
using namespace pybox::client;
using proto::DoctorCheck;

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

const DoctorCheck k_daemon_ok{"daemon", "ok", "pyboxd 1.0 (API v1), the same as this pybox", ""};

}  // namespace

TEST_CASE("A daemon of the client's version and API is ok")
{
    const auto check = check_daemon(proto::PingAnswer{true, "pyboxd", "1.0", "v1"}, "1.0", "v1");
    CHECK(check.verdict == "ok");
    CHECK(check.detail == "pyboxd 1.0 (API v1), the same as this pybox");
}

TEST_CASE("A daemon of another version is a problem fixed by restarting it")
{
    const auto check = check_daemon(proto::PingAnswer{true, "pyboxd", "0.9", "v1"}, "1.0", "v1");
    CHECK(check.verdict == "problem");
    CHECK(has(check.detail, "pyboxd 0.9 (API v1), but this pybox is 1.0 (API v1)"));
    CHECK(has(check.fix, "restart pyboxd"));
}

TEST_CASE("A daemon that is not running is a problem whose fix says how to start it")
{
    const auto check = check_daemon(make_error("daemon_not_running", not_running_message(std::nullopt)), "1.0", "v1");
    CHECK(check.verdict == "problem");
    CHECK(check.detail == "pyboxd is not running.");
    CHECK(check.fix == "pyboxd &   (or, as a service: systemctl --user start pyboxd)");
}

TEST_CASE("A daemon that does not answer in time is a problem")
{
    const auto check = check_daemon(make_error("daemon_timeout", "pyboxd did not answer within 5 s."), "1.0", "v1");
    CHECK(check.verdict == "problem");
    CHECK(has(check.detail, "within 5 s"));
    CHECK_FALSE(check.fix.empty());
}

TEST_CASE("Without the daemon's answer every other check is unknown with why")
{
    const auto checks = doctor_checks(DoctorCheck{"daemon", "problem", "pyboxd is not running.", "pyboxd &"},
                                      make_error("daemon_not_running", "pyboxd does not answer"));
    REQUIRE(checks.size() == 1 + std::size(proto::k_doctor_daemon_checks));
    for (std::size_t i = 1; i < checks.size(); ++i) {
        CHECK(checks[i].name == proto::k_doctor_daemon_checks[i - 1]);
        CHECK(checks[i].verdict == "unknown");
        CHECK(checks[i].detail == "not checked: pyboxd does not answer");
    }
    CHECK(doctor_exit_code(checks) == k_exit_doctor_problem);
}

TEST_CASE("The daemon's checks follow the daemon check")
{
    const auto checks = doctor_checks(k_daemon_ok, pybox::test::sample_doctor());
    REQUIRE(checks.size() == 4);
    CHECK(checks[0] == k_daemon_ok);
    CHECK(checks[2].name == "runtime_folder");
}

TEST_CASE("The exit code is 0 when all pass, 1 with a problem, 2 with only unknowns")
{
    CHECK(doctor_exit_code({k_daemon_ok}) == 0);
    CHECK(doctor_exit_code({k_daemon_ok, {"clock", "unknown", "x", ""}}) == k_exit_doctor_unknown);
    CHECK(doctor_exit_code({{"clock", "unknown", "x", ""}, {"images", "problem", "x", "y"}}) == k_exit_doctor_problem);
    CHECK(doctor_exit_code({k_daemon_ok, {"clock", "warning", "a verdict of a newer daemon", ""}}) ==
          k_exit_doctor_unknown);
}

TEST_CASE("The report has a line per check, a fix under each problem and a summary")
{
    const auto rendered = render_doctor(doctor_checks(k_daemon_ok, pybox::test::sample_doctor()));
    CHECK(rendered.exit_code == 1);
    CHECK(rendered.text ==
          "ok       daemon: pyboxd 1.0 (API v1), the same as this pybox\n"
          "ok       engine: running and verified\n"
          "PROBLEM  runtime_folder: /r has mode 0755, not 0700\n"
          "         fix: chmod 700 /r\n"
          "unknown  clock: the engine's /info was not read\n"
          "1 problem(s), 1 check(s) unknown, of 4.\n");
    CHECK(render_doctor({k_daemon_ok}).text.ends_with("All 1 checks pass.\n"));
}

TEST_CASE("--json is one object with ok, the exit code and every check")
{
    const auto document = boost::json::parse(render_doctor_json(doctor_checks(k_daemon_ok, pybox::test::sample_doctor())));
    CHECK(document.at("ok") == false);
    CHECK(document.at("exit_code") == 1);
    const auto& checks = document.at("checks").as_array();
    REQUIRE(checks.size() == 4);
    CHECK(checks[2].at("verdict") == "problem");
    CHECK(checks[2].at("fix") == "chmod 700 /r");
    CHECK(checks[2].as_object().size() == 4);
    CHECK(boost::json::parse(render_doctor_json({k_daemon_ok})).at("ok") == true);
}

TEST_CASE("docs/reference.md's sentence on doctor's exit codes is the code's")
{
    std::string doc = pybox::test::read_text(pybox::test::source_dir() / "docs" / "reference.md");
    std::replace(doc.begin(), doc.end(), '\n', ' ');
    CHECK(has(doc, "`pybox doctor` exits 0 when every check is ok, " + std::to_string(k_exit_doctor_problem) +
                       " when one is a problem (a daemon that does not answer is one), " +
                       std::to_string(k_exit_doctor_unknown) + " when none is a problem but one is unknown, " +
                       std::to_string(k_exit_pybox_failed) + " when it cannot work at all"));
}

TEST_CASE("docs/doctor.md's exit codes are the code's")
{
    const std::string doc = pybox::test::read_text(pybox::test::source_dir() / "docs" / "doctor.md");
    CHECK(has(doc, "| 0 | every check is ok |"));
    CHECK(has(doc, "| " + std::to_string(k_exit_doctor_problem) + " | at least one check is a problem"));
    CHECK(has(doc, "| " + std::to_string(k_exit_doctor_unknown) + " | no problem, but at least one check is unknown"));
    CHECK(has(doc, "| " + std::to_string(k_exit_pybox_failed) + " | `pybox doctor` itself could not work"));
}
