// `pybox doctor` against the suite's real daemon and engine: a healthy installation passes
// every check, and each check broken on purpose (engine stopped, image tampered, runtime folder
// 0755, a leftover box, no daemon) is a problem with its fix. Each test puts back what it broke,
// even when it fails, so the fixture is left as it was found.
#include "tests/integration/harness.hpp"

#include "common/files.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
#include <string>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> k_check_names{"daemon",        "engine",  "runtime_folder", "free_space",
                                             "images",        "seccomp", "cgroups",        "leftover_boxes",
                                             "attempts",      "clock"};

// Runs `undo` when the scope ends, however it ends.
class Restore {
public:
    explicit Restore(std::function<void()> undo) : m_undo(std::move(undo)) {}
    ~Restore() { m_undo(); }
    Restore(const Restore&) = delete;
    Restore& operator=(const Restore&) = delete;

private:
    std::function<void()> m_undo;
};

struct Doctor {
    ProcessResult process;
    json::object report;

    const json::object& check(const std::string& name) const
    {
        for (const auto& item : report.at("checks").as_array())
            if (item.at("name").as_string() == name) return item.as_object();
        FAIL("no check " << name);
        throw std::logic_error("unreachable");
    }
    std::string verdict(const std::string& name) const { return std::string(check(name).at("verdict").as_string()); }
    std::string fix(const std::string& name) const { return std::string(check(name).at("fix").as_string()); }
};

Doctor doctor_json(const std::vector<std::pair<std::string, std::string>>& env = {})
{
    Doctor doctor{run_pybox({"doctor", "--json"}, "", env), {}};
    INFO("stdout: " << doctor.process.output << "\nstderr: " << doctor.process.error_output);
    boost::system::error_code ec;
    auto parsed = json::parse(doctor.process.output, ec);
    REQUIRE_FALSE(ec);
    REQUIRE(parsed.is_object());
    doctor.report = parsed.as_object();
    return doctor;
}

// Every check but `broken` is ok (the others are unaffected by what the test broke).
void check_only_problem(const Doctor& doctor, const std::string& broken)
{
    INFO(doctor.process.output);
    CHECK(doctor.process.exit_code == 1);
    CHECK(doctor.report.at("ok") == false);
    CHECK(doctor.report.at("exit_code") == 1);
    for (const auto& name : k_check_names) {
        INFO("check " << name);
        CHECK(doctor.verdict(name) == (name == broken ? "problem" : "ok"));
    }
}

// No attempt note other than those of runs in progress (warm boxes): `pybox attempts --json`.
bool no_unsettled_attempts()
{
    const auto listed = run_pybox({"attempts", "--json"});
    if (listed.exit_code != 0) return false;
    const auto answer = json::parse(listed.output);
    for (const auto& note : answer.at("unsettled").as_array())
        if (note.at("in_progress") == false) return false;
    return true;
}

// The installation is as healthy as doctor expects: the warm boxes made, and no run lost by an
// earlier suite (the hostile cases kill daemons mid-run) waiting for the sweep, which settles
// each from its expiry + 60 s (at most 120 + 60 s, plus a sweep interval of 30 s).
void require_healthy()
{
    REQUIRE(warm_boxes_settled());
    // Waited for once: a note the sweep never settles fails each test at once, not after 240 s each.
    static const bool settled = within(std::chrono::seconds(240), no_unsettled_attempts);
    REQUIRE(settled);
}

void check_all_ok()
{
    const auto doctor = doctor_json();
    INFO(doctor.process.output);
    CHECK(doctor.process.exit_code == 0);
    for (const auto& name : k_check_names) {
        INFO("check " << name);
        CHECK(doctor.verdict(name) == "ok");
    }
}

}  // namespace

TEST_CASE("doctor on a healthy installation passes every check and exits 0")
{
    require_healthy();
    const auto run = run_pybox({"doctor"});
    INFO(run.output << run.error_output);
    CHECK(run.exit_code == 0);
    for (const auto& name : k_check_names) CHECK(run.output.find("ok       " + name + ": ") != std::string::npos);
    CHECK(run.output.ends_with("All 10 checks pass.\n"));
    CHECK(run.output.find("PROBLEM") == std::string::npos);
}

TEST_CASE("doctor --json prints one object: ok, the exit code, and each check's four keys in order")
{
    require_healthy();
    const auto doctor = doctor_json();
    CHECK(doctor.process.exit_code == 0);
    CHECK(doctor.report.size() == 3);
    CHECK(doctor.report.at("ok") == true);
    CHECK(doctor.report.at("exit_code") == 0);
    const auto& checks = doctor.report.at("checks").as_array();
    REQUIRE(checks.size() == k_check_names.size());
    for (std::size_t i = 0; i < checks.size(); ++i) {
        const auto& check = checks[i].as_object();
        CHECK(check.size() == 4);
        CHECK(check.at("name").as_string() == k_check_names[i]);
        CHECK(check.at("verdict").as_string() == "ok");
        CHECK_FALSE(check.at("detail").as_string().empty());
        CHECK(check.at("fix").as_string().empty());
    }
}

TEST_CASE("doctor with the engine stopped says so, fixes it with vm start, and cannot check the rest")
{
    require_healthy();
    const Restore restart([] {
        const auto started = run_pybox({"vm", "start"});
        INFO(started.output << started.error_output);
        CHECK(started.exit_code == 0);
        CHECK(warm_boxes_settled());
    });
    const auto stopped = run_pybox({"vm", "stop"});
    REQUIRE(stopped.exit_code == 0);

    const auto doctor = doctor_json();
    INFO(doctor.process.output);
    CHECK(doctor.process.exit_code == 1);
    CHECK(doctor.verdict("engine") == "problem");
    CHECK(doctor.fix("engine") == "pybox vm start");
    for (const auto* name : {"images", "seccomp", "cgroups", "leftover_boxes", "clock"}) {
        INFO("check " << name);
        CHECK(doctor.verdict(name) == "unknown");
    }
    for (const auto* name : {"daemon", "runtime_folder", "free_space", "attempts"}) {
        INFO("check " << name);
        CHECK(doctor.verdict(name) == "ok");
    }
}

TEST_CASE("doctor with an image whose recorded recipe SHA-256 was changed says to run setup")
{
    require_healthy();
    const fs::path file = runtime_home() / "images.json";
    const auto original = read_file_capped(file, 64 * 1024);
    REQUIRE(original.has_value());
    auto images = json::parse(*original);
    auto& recipe = images.at("images").at(0).as_object()["recipe_sha256"];
    std::string tampered(recipe.as_string());
    tampered[0] = tampered[0] == '0' ? '1' : '0';
    recipe = tampered;
    const Restore put_back([&] {
        CHECK(write_file_atomic(file, *original).has_value());
        CHECK(warm_boxes_settled());
    });
    REQUIRE(write_file_atomic(file, json::serialize(images)).has_value());

    const auto doctor = doctor_json();
    check_only_problem(doctor, "images");
    CHECK(doctor.check("images").at("detail").as_string().find("do not match the recipe SHA-256") != std::string::npos);
    CHECK(doctor.fix("images") == "pybox setup");
}

TEST_CASE("doctor with the runtime folder at 0755 says to chmod it back")
{
    require_healthy();
    const fs::path home = runtime_home();
    const Restore put_back([&] { fs::permissions(home, fs::perms::owner_all, fs::perm_options::replace); });
    fs::permissions(home, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec,
                    fs::perm_options::replace);

    const auto doctor = doctor_json();
    check_only_problem(doctor, "runtime_folder");
    CHECK(doctor.check("runtime_folder").at("detail").as_string() == home.string() + " has mode 0755, not 0700");
    CHECK(doctor.fix("runtime_folder") == "chmod 700 " + home.string());
}

TEST_CASE("doctor finds a box with this installation's label that no run holds and says how to remove it")
{
    require_healthy();
    const auto installation = read_file_capped(runtime_home() / "installation.json", 4096);
    REQUIRE(installation.has_value());
    const std::string owner(json::parse(*installation).at("installation_id").as_string());
    const auto images = read_file_capped(runtime_home() / "images.json", 64 * 1024);
    REQUIRE(images.has_value());
    const std::string image(json::parse(*images).at("images").at(0).at("image_id").as_string());
    // Not expired for an hour: the sweep leaves it to this test.
    const auto expires = std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count() +
                                        3600);
    const std::string box = docker_ok({"create", "--label=pybox.owner=" + owner, "--label=pybox.run=doctor-leftover",
                                       "--label=pybox.expires=" + expires, image, "true"});
    const Restore remove([&] {
        (void)docker({"rm", "-f", box});
        CHECK_FALSE(box_exists(box));
    });

    const auto doctor = doctor_json();
    check_only_problem(doctor, "leftover_boxes");
    CHECK(doctor.fix("leftover_boxes").find("rm -f " + box.substr(0, 12)) != std::string::npos);
}

TEST_CASE("doctor finds an attempt note of a run that is not in progress and points to the sweep")
{
    require_healthy();
    const auto installation = read_file_capped(runtime_home() / "installation.json", 4096);
    REQUIRE(installation.has_value());
    const std::string owner(json::parse(*installation).at("installation_id").as_string());
    // A lost run's note whose expiry is an hour away: the sweep leaves it to this test.
    const std::string run_id = "d0c70000000000000000000000000001";
    const fs::path note = runtime_home() / "attempts" / (run_id + ".json");
    const auto expires = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count() + 3600;
    const Restore remove([&] { fs::remove(note); });
    REQUIRE(write_file_atomic(note, json::serialize(json::object{{"run_id", run_id},
                                                                 {"installation_id", owner},
                                                                 {"created_at", "2026-12-01T00:00:00Z"},
                                                                 {"expires_at", expires},
                                                                 {"container_id", ""},
                                                                 {"engine", "local"}}))
                .has_value());

    const auto doctor = doctor_json();
    check_only_problem(doctor, "attempts");
    CHECK(doctor.check("attempts").at("detail").as_string().find("d0c70000") != std::string::npos);
    CHECK(doctor.fix("attempts").find("expiry + 60 s") != std::string::npos);
}

TEST_CASE("doctor without a daemon says how to start it and leaves every other check unknown")
{
    const fs::path home = runtime_home().string() + "-doctor-no-daemon";
    fs::remove_all(home);
    const auto doctor = doctor_json({{"PYBOX_HOME", home.string()}});
    INFO(doctor.process.output);
    CHECK(doctor.process.exit_code == 1);
    CHECK(doctor.verdict("daemon") == "problem");
    CHECK(doctor.fix("daemon").find("pyboxd") != std::string::npos);
    for (std::size_t i = 1; i < k_check_names.size(); ++i) {
        INFO("check " << k_check_names[i]);
        CHECK(doctor.verdict(k_check_names[i]) == "unknown");
    }
}

TEST_CASE("doctor's last check leaves the installation healthy")
{
    require_healthy();
    check_all_ok();
}
