// `pybox doctor`'s daemon-side verdicts (daemon/doctor/doctor_checks.hpp): one test per outcome
// of each check, and docs/doctor.md held to the thresholds and check names in code.
#include "daemon/doctor/doctor_checks.hpp"
#include "daemon/engine/docker_facts.hpp"
#include "tests/support/build_paths.hpp"

#include "daemon/run/run_watch.hpp"
#include "proto/seccomp_profile.hpp"
#include "tests/support/source_text.hpp"

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

namespace {

namespace json = boost::json;
using namespace pybox;
using namespace pybox::daemon;
using proto::DoctorCheck;

bool is_ok(const DoctorCheck& check) { return check.verdict == "ok" && check.fix.empty(); }
bool is_problem(const DoctorCheck& check) { return check.verdict == "problem" && !check.fix.empty(); }
bool is_unknown(const DoctorCheck& check) { return check.verdict == "unknown" && check.fix.empty(); }
bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

proto::EngineStatus verified_engine_status()
{
    proto::EngineStatus status;
    status.running = true;
    status.verified = true;
    status.engine_socket = "/r/engine/docker.sock";
    status.api_version = "1.41";
    return status;
}

FileFacts folder(unsigned mode, unsigned uid)
{
    FileFacts facts;
    facts.kind = FileFacts::Kind::folder;
    facts.mode = mode;
    facts.uid = uid;
    return facts;
}

// The engine's info from a GET /info answer with `extra` in it.
engine::EngineInfo info(std::string_view extra = R"("SecurityOptions": ["name=seccomp,profile=default"],
                                                 "CgroupVersion": "1", "CgroupDriver": "cgroupfs")")
{
    return engine::docker_engine_info(json::parse(R"({"OSType": "linux", )" + std::string(extra) + "}"));
}

WatcherView watcher_on() { return {std::nullopt, "/sys/fs/cgroup", true, false, std::nullopt}; }

const Error k_engine_down = make_error("engine_unreachable", "The engine does not answer.");

}  // namespace

TEST_CASE("A running, verified engine is ok")
{
    const auto check = check_engine(verified_engine_status());
    CHECK(check.name == "engine");
    CHECK(is_ok(check));
    CHECK(has(check.detail, "API 1.41"));
}

TEST_CASE("An engine that is not running is a problem fixed by vm start")
{
    proto::EngineStatus status;
    status.engine_socket = "/r/engine/docker.sock";
    status.problems = {{"ping", "The engine does not answer."}};
    const auto check = check_engine(status);
    CHECK(is_problem(check));
    CHECK(has(check.detail, "not running: The engine does not answer."));
    CHECK(check.fix == "pybox vm start");
}

TEST_CASE("A running engine that is not verified is a problem that quotes why")
{
    auto status = verified_engine_status();
    status.verified = false;
    status.problems = {{"info.seccomp", "no seccomp"}, {"images", "run pybox setup"}};
    const auto check = check_engine(status);
    CHECK(is_problem(check));
    CHECK(has(check.detail, "no seccomp; run pybox setup"));
}

TEST_CASE("An engine of the pool that is not verified is a problem naming it")
{
    auto status = verified_engine_status();
    status.engines = {proto::PoolEngine{"local", "unix:///r", true, true, true, 0, {}, {}, "1.41"},
                      proto::PoolEngine{"e2", "ssh://u@h:22", true, false, false, 0, {{"ping", "no answer"}}, {}, {}}};
    const auto check = check_engine(status);
    CHECK(is_problem(check));
    CHECK(has(check.detail, "engine e2 of the pool (ssh://u@h:22) is not verified: no answer"));
}

TEST_CASE("A pool whose engines that take runs are all verified is ok")
{
    auto status = verified_engine_status();
    status.engines = {proto::PoolEngine{"local", "unix:///r", false, true, false, 0, {{"x", "y"}}, {}, {}},
                      proto::PoolEngine{"e2", "ssh://u@h:22", true, true, true, 0, {}, {}, "1.41"}};
    const auto check = check_engine(status);
    CHECK(is_ok(check));
    CHECK(has(check.detail, "1 engines of the pool verified"));
}

TEST_CASE("A runtime folder of mode 0700 owned by the user is ok")
{
    CHECK(is_ok(check_runtime_folder("/r", folder(0700, 1000), 1000)));
}

TEST_CASE("A runtime folder of mode 0755 is a problem fixed by chmod 700")
{
    const auto check = check_runtime_folder("/r", folder(0755, 1000), 1000);
    CHECK(is_problem(check));
    CHECK(check.detail == "/r has mode 0755, not 0700");
    CHECK(check.fix == "chmod 700 /r");
}

TEST_CASE("A runtime folder of another user is a problem")
{
    const auto check = check_runtime_folder("/r", folder(0700, 0), 1000);
    CHECK(is_problem(check));
    CHECK(has(check.detail, "belongs to uid 0, not to 1000"));
}

TEST_CASE("A runtime folder that is missing or not a folder is a problem")
{
    CHECK(is_problem(check_runtime_folder("/r", std::nullopt, 1000)));
    auto file = folder(0700, 1000);
    file.kind = FileFacts::Kind::symbolic_link;
    CHECK(has(check_runtime_folder("/r", file, 1000).detail, "is not a folder"));
}

TEST_CASE("Free space at the threshold is ok, below it a problem, unreadable unknown")
{
    CHECK(is_ok(check_free_space("/r", k_doctor_min_free_bytes)));
    const auto low = check_free_space("/r", k_doctor_min_free_bytes - 1);
    CHECK(is_problem(low));
    CHECK(has(low.detail, "less than 2.0 GiB"));
    CHECK(is_unknown(check_free_space("/r", make_error("free_space_unknown", "statvfs failed"))));
}

TEST_CASE("Images that pass the pre-run check are ok")
{
    const std::vector<ImageVerdict> images{{"stdlib", {}}, {"data", {}}};
    const auto check = check_images(images);
    CHECK(is_ok(check));
    CHECK(has(check.detail, "stdlib, data"));
}

TEST_CASE("No image built is a problem fixed by pybox setup")
{
    const auto check = check_images(std::vector<ImageVerdict>{});
    CHECK(is_problem(check));
    CHECK(check.fix == "pybox setup");
}

TEST_CASE("An image whose recipe SHA-256 differs is a problem with the pre-run check's fix")
{
    const std::vector<ImageVerdict> images{
        {"stdlib", {}},
        {"own-x", make_error("image_mismatch", "The recipe and lock of the own-x image do not match. "
                                               "Run: pybox image build own-x --recipe FILE")}};
    const auto check = check_images(images);
    CHECK(is_problem(check));
    CHECK(check.detail == "The recipe and lock of the own-x image do not match.");
    CHECK(check.fix == "pybox image build own-x --recipe FILE");
}

TEST_CASE("An unreadable images.json is a problem")
{
    CHECK(is_problem(check_images(make_error("images_file_invalid", "images.json is not JSON. Run: pybox setup"))));
}

TEST_CASE("Images that cannot be checked because the engine does not answer are unknown")
{
    const std::vector<ImageVerdict> images{{"stdlib", k_engine_down}};
    const auto check = check_images(images);
    CHECK(is_unknown(check));
    CHECK(has(check.detail, "The engine does not answer."));
}

TEST_CASE("An engine offering seccomp is ok and the profile is named with its hash")
{
    const auto check = check_seccomp(info());
    CHECK(is_ok(check));
    CHECK(has(check.detail, proto::k_seccomp_profile_name));
    CHECK(has(check.detail, proto::seccomp_profile_sha256().substr(0, 12)));
}

TEST_CASE("An engine without seccomp is a problem; an engine that does not answer is unknown")
{
    CHECK(is_problem(check_seccomp(info(R"("SecurityOptions": [], "CgroupVersion": "1", "CgroupDriver": "cgroupfs")"))));
    CHECK(is_unknown(check_seccomp(k_engine_down)));
}

TEST_CASE("cgroup v1 with cgroupfs, seen by the watcher, is ok")
{
    const auto check = check_cgroups(info(), watcher_on());
    CHECK(is_ok(check));
    CHECK(has(check.detail, "cgroup v1, driver cgroupfs"));
}

TEST_CASE("The systemd cgroup driver is a problem: runs are not watched")
{
    const auto check = check_cgroups(
        info(R"("SecurityOptions": ["name=seccomp"], "CgroupVersion": "2", "CgroupDriver": "systemd")"), watcher_on());
    CHECK(is_problem(check));
    CHECK(has(check.fix, "native.cgroupdriver=cgroupfs"));
}

TEST_CASE("An unknown cgroup driver is a problem")
{
    CHECK(is_problem(check_cgroups(
        info(R"("SecurityOptions": ["name=seccomp"], "CgroupVersion": "1", "CgroupDriver": "none")"), watcher_on())));
}

TEST_CASE("A watcher switched off in config.json is a problem that says why")
{
    auto watcher = watcher_on();
    watcher.off_reason = std::string(k_watcher_off_in_config);
    const auto check = check_cgroups(info(), watcher);
    CHECK(is_problem(check));
    CHECK(has(check.detail, "switched off"));
    CHECK(has(check.fix, "config.json"));
}

TEST_CASE("A watcher that reads another machine's cgroup files (macOS: the colima VM) leaves the cgroups check unknown, naming it")
{
    auto watcher = watcher_on();
    watcher.elsewhere = "the colima VM: ssh://ada@127.0.0.1:60022 (cgroup files read over ssh)";
    const auto check = check_cgroups(info(), watcher);
    CHECK(is_unknown(check));
    CHECK(has(check.detail, "the watcher reads the colima VM: ssh://ada@127.0.0.1:60022"));
}

TEST_CASE("A hierarchy the watcher does not see is a problem")
{
    const auto check = check_cgroups(info(), WatcherView{std::nullopt, "/sys/fs/cgroup", false, true, std::nullopt});
    CHECK(is_problem(check));
    CHECK(has(check.detail, "does not see"));
    CHECK(is_unknown(check_cgroups(k_engine_down, watcher_on())));
}

TEST_CASE("Labelled boxes all held by runs are no leftover")
{
    const std::vector<LabelledBox> boxes{{"aaaaaaaaaaaaaaaa", "run1", true}};
    const auto check = check_leftover_boxes(boxes, "unix:///r/engine/docker.sock");
    CHECK(is_ok(check));
    CHECK(has(check.detail, "1 box(es) held"));
}

TEST_CASE("A labelled box no run holds is a problem whose fix removes it")
{
    const std::vector<LabelledBox> boxes{{"0123456789abcdef", "leftover-run", false}, {"fedcba", "run2", true}};
    const auto check = check_leftover_boxes(boxes, "unix:///r/engine/docker.sock");
    CHECK(is_problem(check));
    CHECK(has(check.detail, "1 box(es)"));
    CHECK(has(check.fix, "docker -H unix:///r/engine/docker.sock rm -f 0123456789ab"));
    CHECK(is_unknown(check_leftover_boxes(k_engine_down, "unix:///r")));
}

TEST_CASE("Attempt notes only of runs in progress are ok")
{
    proto::AttemptsAnswer answer;
    answer.unsettled = {{"warm1", "2026-12-01T00:00:00Z", 1, "c", true, true, true}};
    CHECK(is_ok(check_attempts(answer, "/r/attempts")));
}

TEST_CASE("An unsettled attempt is a problem pointing to the sweep")
{
    proto::AttemptsAnswer answer;
    answer.unsettled = {{"3f2e1d0c9b8a", "2026-12-01T00:00:00Z", 1, "c", true, false, false}};
    const auto check = check_attempts(answer, "/r/attempts");
    CHECK(is_problem(check));
    CHECK(has(check.detail, "3f2e1d0c"));
    CHECK(has(check.fix, "expiry + 60 s"));
}

TEST_CASE("A damaged attempt note is a problem; an unreadable record unknown")
{
    proto::AttemptsAnswer answer;
    answer.unsettled = {{"bad", "", 0, "", false, false, false}};
    const auto check = check_attempts(answer, "/r/attempts");
    CHECK(is_problem(check));
    CHECK(has(check.fix, "/r/attempts"));
    CHECK(is_unknown(check_attempts(make_error("file_unreadable", "no"), "/r/attempts")));
}

TEST_CASE("A clock offset within the limit is ok, surely past it a problem, too wide or unmeasured unknown")
{
    const std::int64_t limit = k_doctor_max_clock_offset_ms * 1'000'000;
    CHECK(is_ok(check_clock(proto::ClockOffset{-1'000'000, 2'000'000})));
    CHECK(is_problem(check_clock(proto::ClockOffset{limit + 1, limit + 5'000'000})));
    CHECK(is_problem(check_clock(proto::ClockOffset{-limit - 5'000'000, -limit - 1})));
    CHECK(is_unknown(check_clock(proto::ClockOffset{-10, limit + 1})));
    CHECK(is_unknown(check_clock(make_error("clock_unmeasured", "no SystemTime"))));
}

TEST_CASE("docs/doctor.md repeats the thresholds and lists every check in the code's order")
{
    const std::string doc =
        pybox::test::read_text(pybox::test::source_dir() / "docs" / "doctor.md");
    CHECK(has(doc, "less than " + std::to_string(k_doctor_min_free_bytes >> 30) + " GiB"));
    CHECK(has(doc, "more than " + std::to_string(k_doctor_max_clock_offset_ms) + " ms"));
    static const std::regex row(R"(\n\| `([a-z_]+)` \| )");
    std::vector<std::string> documented;
    const auto table = doc.substr(doc.find("## The checks"));
    for (std::sregex_iterator it(table.begin(), table.end(), row), end; it != end; ++it)
        documented.push_back((*it)[1].str());
    std::vector<std::string> in_code{std::string(proto::k_doctor_daemon)};
    for (const auto name : proto::k_doctor_daemon_checks) in_code.emplace_back(name);
    CHECK(documented == in_code);
}
