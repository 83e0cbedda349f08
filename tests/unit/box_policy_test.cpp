#include "proto/box_policy.hpp"

#include "common/process.hpp"
#include "common/sha256.hpp"
#include "proto/seccomp_profile.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

using namespace pybox::proto;
namespace json = boost::json;

TEST_CASE("The stdlib policy matches the reference table")
{
    const auto policy = policy_for_image("stdlib");
    REQUIRE(policy);
    CHECK(policy->memory_bytes == 128 * 1024 * 1024);
    CHECK(policy->pids == 32);
    CHECK(policy->nano_cpus == 500'000'000);
    CHECK(policy->cpu_cores() == 0.5);
    CHECK(policy->tmpfs_bytes == 16 * 1024 * 1024);
}

TEST_CASE("The data policy matches the reference table")
{
    const auto policy = policy_for_image("data");
    REQUIRE(policy);
    CHECK(policy->memory_bytes == 512 * 1024 * 1024);
    CHECK(policy->pids == 64);
    CHECK(policy->nano_cpus == 1'000'000'000);
    CHECK(policy->cpu_cores() == 1.0);
}

TEST_CASE("Both policies share the same lock-down settings")
{
    for (const auto& image : known_images()) {
        const auto policy = policy_for_image(image);
        REQUIRE(policy);
        CHECK(policy->user == "10000:10000");
        CHECK(policy->readonly_root);
        CHECK(policy->network == "none");
        CHECK(policy->open_files == 128);
        CHECK(policy->core_dump_bytes == 0);
        CHECK(policy->log_driver == "none");
        CHECK(policy->no_new_privileges);
        CHECK(policy->capabilities_dropped == "ALL");
        CHECK(policy->seccomp == "pybox-seccomp-v1");
        CHECK(policy->seccomp_sha256 == pybox::sha256_hex(seccomp_profile_json()));
        CHECK(policy->tmpfs_path == "/tmp");
    }
}

TEST_CASE("stdlib and data are the built-in images; other names get a policy only as own images")
{
    CHECK(known_images() == std::vector<std::string>{"stdlib", "data"});
    CHECK_FALSE(policy_for_image("python:3.12"));
    CHECK_FALSE(policy_for_image(""));
    CHECK_FALSE(policy_for_image("STDLIB"));
}

TEST_CASE("Own image names: a lower-case letter, then lower-case letters, digits and '-', 32 at most")
{
    for (const auto* good : {"a", "six", "my-tools", "x1", "a-", "abcdefghijklmnopqrstuvwxyz012345"}) {
        INFO(good);
        CHECK(is_own_image_name(good));
        CHECK(own_image_name_problem(good).empty());
    }
    for (const auto* bad : {"", "1abc", "-abc", "Abc", "a_b", "a.b", "a/b", "a b", "../x", "a\n",
                            "abcdefghijklmnopqrstuvwxyz0123456", "caf\xc3\xa9"}) {
        INFO(bad);
        CHECK_FALSE(is_own_image_name(bad));
        CHECK_THAT(own_image_name_problem(bad), Catch::Contains("1 to 32 characters"));
    }
}

TEST_CASE("Own image names cannot be a built-in image's")
{
    for (const auto& builtin : known_images()) {
        CHECK_FALSE(is_own_image_name(builtin));
        CHECK_THAT(own_image_name_problem(builtin), Catch::Contains("is a built-in image"));
    }
}

TEST_CASE("Own images get exactly the stdlib policy")
{
    CHECK(policy_for_image("my-tools") == policy_for_image("stdlib"));
    CHECK(policy_for_image("my-tools") != policy_for_image("data"));
}

TEST_CASE("The tmpfs option string gives the size in bytes and the hardening flags")
{
    CHECK(policy_for_image("stdlib")->tmpfs_mount_options() == "size=16777216,noexec,nodev,nosuid");
}

TEST_CASE("The box command carries a timer one second past the deadline")
{
    CHECK(box_command(2.0) ==
          std::vector<std::string>{"timeout", "-s", "KILL", "3", "python3", "-I", "-B", "-u", "-"});
    CHECK(box_command(0.5)[3] == "1.5");
    CHECK(box_command(0.1)[3] == "1.1");
    CHECK(box_command(30.0)[3] == "31");
}

namespace {

// The warm command's shell step, run here by the host's /bin/sh (Debian's dash, as in the
// images) with `input` on stdin, in an environment like the box's (only HOME and PATH set).
pybox::ProcessResult run_warm_step(const std::string& input)
{
    auto argv = warm_box_command();
    REQUIRE(argv.front() == "sh");
    argv.front() = "/bin/sh";
    argv.insert(argv.begin(), {"/usr/bin/env", "-i", "HOME=/tmp", "PATH=/usr/bin:/bin"});
    pybox::ProcessOptions options;
    options.input = input;
    options.separate_stderr = true;
    options.timeout = std::chrono::seconds(20);
    auto ran = pybox::run_process(argv, options);
    REQUIRE(ran.has_value());
    return *ran;
}

}  // namespace

TEST_CASE("A warm box's first step reads the timer line, then python reads exactly the program after it")
{
    CHECK(warm_box_timer_line(3.0) == "3\n");
    CHECK(warm_box_timer_line(1.5) == "1.5\n");
    const auto ran = run_warm_step(warm_box_timer_line(3.0) + "import sys\nprint(repr(sys.stdin.read()))\n#tail");
    CHECK(ran.exit_code == 0);
    // The program is what follows the line: python read it whole, so its own stdin is empty.
    CHECK(ran.output == "''\n");
}

TEST_CASE("A warm box's first step leaves no PWD behind, so the program's environment is a cold box's")
{
    const auto ran = run_warm_step(warm_box_timer_line(3.0) + "import os\nprint('PWD' in os.environ)\n");
    CHECK(ran.exit_code == 0);
    CHECK(ran.output == "False\n");
}

TEST_CASE("A warm box's timer counts from the line: the program is killed when it passes")
{
    const auto started = std::chrono::steady_clock::now();
    const auto ran = run_warm_step(warm_box_timer_line(0.5) + "import time\ntime.sleep(10)\n");
    const auto took = std::chrono::steady_clock::now() - started;
    // In a box, timeout is PID 1 and reports its child's SIGKILL as 128 + 9; here it is not, and
    // its SIGKILL to its own process group ends it too.
    CHECK((ran.exit_code == 137 || ran.signal == 9));
    CHECK(took < std::chrono::seconds(5));
}

TEST_CASE("A warm box whose stdin closes before a line ends without starting python")
{
    const auto ran = run_warm_step("");
    CHECK(ran.exit_code == 1);
    CHECK(ran.output.empty());
}

namespace {

// The profile's rules, parsed (fails the test if the text is not a JSON object).
json::array seccomp_rules()
{
    boost::system::error_code ec;
    const auto profile = json::parse(seccomp_profile_json(), ec);
    REQUIRE_FALSE(ec);
    REQUIRE(profile.is_object());
    CHECK(profile.at("defaultAction") == "SCMP_ACT_ERRNO");
    return profile.at("syscalls").as_array();
}

}  // namespace

TEST_CASE("The seccomp profile denies by default and allows none of the calls a box must never make")
{
    const std::set<std::string> denied = {
        "ptrace", "process_vm_readv", "process_vm_writev", "userfaultfd", "perf_event_open", "bpf", "keyctl",
        "add_key", "request_key", "io_uring_setup", "io_uring_enter", "io_uring_register", "kcmp", "pidfd_getfd",
        "process_madvise", "unshare", "setns", "mount", "umount2", "init_module", "finit_module", "kexec_load",
        "open_by_handle_at", "clock_settime", "settimeofday", "reboot", "chroot", "iopl", "ioperm", "syslog"};
    std::size_t rules = 0;
    for (const auto& rule : seccomp_rules()) {
        ++rules;
        if (rule.at("action") != "SCMP_ACT_ALLOW") continue;
        for (const auto& name : rule.at("names").as_array()) {
            INFO("allowed: " << name);
            CHECK(denied.count(std::string(name.as_string())) == 0);
        }
    }
    CHECK(rules > 0);
}

TEST_CASE("The seccomp profile has no rule that depends on a capability or a kernel version")
{
    // Boxes drop ALL capabilities, so such a rule could never apply as written; and an engine
    // that did not know a condition would ignore it and apply the rule unconditionally.
    for (const auto& rule : seccomp_rules()) {
        for (const char* section : {"includes", "excludes"}) {
            const auto* filter = rule.as_object().if_contains(section);
            if (filter == nullptr) continue;
            INFO(json::serialize(rule));
            CHECK(filter->as_object().if_contains("caps") == nullptr);
            CHECK(filter->as_object().if_contains("minKernel") == nullptr);
        }
    }
}

TEST_CASE("The seccomp profile allows personality only with the default's exact arguments")
{
    std::set<std::int64_t> allowed;
    for (const auto& rule : seccomp_rules()) {
        const auto& names = rule.at("names").as_array();
        if (std::find(names.begin(), names.end(), json::value("personality")) == names.end()) continue;
        REQUIRE(names.size() == 1);
        const auto& args = rule.at("args").as_array();
        REQUIRE(args.size() == 1);
        CHECK(args[0].at("index") == 0);
        CHECK(args[0].at("op") == "SCMP_CMP_EQ");
        allowed.insert(args[0].at("value").to_number<std::int64_t>());
    }
    CHECK(allowed == std::set<std::int64_t>{0, 8, 0x20000, 0x20008, 0xffffffff});
}

TEST_CASE("The seccomp profile turns clone3 into ENOSYS so the C library falls back to clone")
{
    bool found = false;
    for (const auto& rule : seccomp_rules()) {
        if (rule.at("names") != json::array{"clone3"}) continue;
        found = true;
        CHECK(rule.at("action") == "SCMP_ACT_ERRNO");
        CHECK(rule.at("errnoRet") == 38);
    }
    CHECK(found);
}
