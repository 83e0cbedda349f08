#include "proto/box_policy.hpp"

#include "common/process.hpp"
#include "common/sha256.hpp"
#include "proto/seccomp_profile.hpp"
#include "tests/support/box_like.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

using namespace pybox::proto;
using pybox::test::k_box_like;
using pybox::test::run_box_like;
using pybox::test::run_box_like_unprivileged;
using pybox::test::run_with_input;
namespace json = boost::json;

TEST_CASE("The stdlib policy matches the reference table")
{
    const auto policy = policy_for_image("stdlib");
    REQUIRE(policy);
    CHECK(policy->memory_bytes == 128 * 1024 * 1024);
    CHECK(policy->pids == 32);
    CHECK(policy->cpu_millis == 500);
    CHECK(policy->cpu_cores() == 0.5);
    CHECK(policy->tmpfs_bytes == 16 * 1024 * 1024);
}

TEST_CASE("The data policy matches the reference table")
{
    const auto policy = policy_for_image("data");
    REQUIRE(policy);
    CHECK(policy->memory_bytes == 512 * 1024 * 1024);
    CHECK(policy->pids == 64);
    CHECK(policy->cpu_millis == 1000);
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
        CHECK(policy->no_new_privileges);
        CHECK(policy->capabilities_dropped == "ALL");
        CHECK(policy->seccomp == "pybox-seccomp-v2");
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

TEST_CASE("The tmpfs flags are noexec, nodev and nosuid in mount's notation")
{
    CHECK(tmpfs_flags(*policy_for_image("stdlib")) == "noexec,nodev,nosuid");
    BoxPolicy policy;
    policy.tmpfs_nodev = false;
    CHECK(tmpfs_flags(policy) == "noexec,nosuid");
}

TEST_CASE("The box command carries a timer one second past the deadline")
{
    const auto command = box_command(2.0);
    REQUIRE(command.size() == 9);
    CHECK(command[0] == "perl");
    CHECK(command[1] == "-e");
    CHECK(std::vector<std::string>(command.begin() + 3, command.end()) ==
          std::vector<std::string>{"3", "python3", "-I", "-B", "-u", "-"});
    CHECK(box_command(0.5)[3] == "1.5");
    CHECK(box_command(0.1)[3] == "1.1");
    CHECK(box_command(30.0)[3] == "31");
}

namespace {

// A program that tries to get into its parent, the box's first process (in /proc by its host
// pid, as the host's /proc is the one mounted here; for process_vm_writev by its pid in the
// namespace), and prints what each attempt gave: "open" or the errno.
constexpr const char* k_into_pid1 = R"(import ctypes, os, platform
parent = int([line.split()[1] for line in open('/proc/self/status') if line.startswith('PPid:')][0])
def attempt(call):
    try:
        call()
        return 'open'
    except OSError as e:
        return str(e.errno)
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
def vm_write():
    buffer = ctypes.create_string_buffer(8)
    local, remote = iovec(ctypes.addressof(buffer), 8), iovec(0x10000, 8)
    number = {'x86_64': 311, 'aarch64': 271}[platform.machine()]
    if libc.syscall(ctypes.c_long(number), ctypes.c_long(os.getppid()), ctypes.byref(local), ctypes.c_ulong(1),
                    ctypes.byref(remote), ctypes.c_ulong(1), ctypes.c_ulong(0)) == -1:
        raise OSError(ctypes.get_errno(), 'process_vm_writev')
print(os.getuid(), attempt(lambda: open('/proc/%d/mem' % parent, 'r+b')),
      attempt(lambda: open('/proc/%d/maps' % parent)), attempt(lambda: open('/proc/%d/environ' % parent)),
      attempt(vm_write))
)";

// The warm command with `input` on stdin (the timer line, then the program).
pybox::ProcessResult run_warm_step(const std::string& input)
{
    auto argv = warm_box_command();
    REQUIRE(argv.front() == "perl");
    argv.front() = "/usr/bin/perl";
    return run_box_like(argv, input);
}

// A cold box's command (deadline 2 s, timer 3 s) with `program` on stdin.
pybox::ProcessResult run_cold_step(const std::string& program) { return run_box_like(box_command(2.0), program); }

// What a program sees of how it was started, printed: everything a cold and a warm box must
// agree on. (Its process group and session are left to the integration test: in a box PID 1 is
// a session leader, so both are 1; here a cold box's timeout makes its own group.)
constexpr const char* k_introspection = R"(import sys
modules = sorted(sys.modules)
import os, signal
print(__name__, '__file__' in globals(), sys.argv, sys.orig_argv, sys.executable, sys.flags)
print(sys.path)
print(modules)
print(sys.stdin.read() == '', os.readlink('/proc/self/fd/0').split(':')[0], sorted(os.listdir('/proc/self/fd')))
print(sys.stdout.write_through, sys.stderr.write_through, sys.stdin.isatty())
print(sorted(os.environ.items()), os.getcwd(), os.getpid(), os.getppid(), os.umask(0))
print([(int(s), str(signal.getsignal(s))) for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP)])
print([line for line in open('/proc/self/status') if line.startswith(('SigPnd', 'ShdPnd', 'SigBlk', 'SigIgn', 'SigCgt'))])
)";

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

TEST_CASE("A warm box's interpreter is started before delivery, so the program finds it already running")
{
    // The line and the program arrive 1 s after the box's first process started; the program
    // measures how long its interpreter has been running (process start time against uptime).
    const std::string program = "import os\n"
                                "start = int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19])\n"
                                "age = float(open('/proc/uptime').read().split()[0]) - start / os.sysconf('SC_CLK_TCK')\n"
                                "print(age >= 0.8, flush=True)\n";
    std::vector<std::string> argv = {"/bin/sh", "-c", "p=$1 && shift && (sleep 1; printf '%s' \"$p\") | \"$@\"", "sh",
                                     warm_box_timer_line(3.0) + program};
    argv.insert(argv.end(), k_box_like.begin(), k_box_like.end());
    argv.insert(argv.end(), {"/usr/bin/perl", "-e", warm_box_command().back()});
    pybox::ProcessOptions options;
    options.separate_stderr = true;
    options.timeout = std::chrono::seconds(20);
    const auto ran = pybox::run_process(argv, options);
    REQUIRE(ran.has_value());
    INFO("stderr: " << ran->error_output);
    CHECK(ran->exit_code == 0);
    CHECK(ran->output == "True\n");
}

TEST_CASE("A warm box runs its program exactly as a cold box does: what it sees, its output, tracebacks and exit codes")
{
    const std::vector<std::string> programs = {
        k_introspection,
        "print('out')\nimport sys\nprint('err', file=sys.stderr)\n",
        "x = 1\nraise ValueError('at the top level')\n",
        "def inner():\n    return 1 / 0\n\ndef outer():\n    inner()\n\nouter()\n",
        "def f(:\n",
        "import sys\nprint('leaving')\nsys.exit(3)\n",
        "raise SystemExit('a message')\n",
        "raise KeyboardInterrupt\n",
        "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nimport time\ntime.sleep(5)\n",
        "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\nimport time\ntime.sleep(5)\n",
        "import os\nos._exit(7)\n",
        "import sys\nprint(sys.stdin.read() == '', input.__name__)\ninput()\n",
    };
    for (const auto& program : programs) {
        INFO("program:\n" << program);
        const auto cold = run_cold_step(program);
        const auto warm = run_warm_step(warm_box_timer_line(3.0) + program);
        CHECK(warm.output == cold.output);
        CHECK(warm.error_output == cold.error_output);
        CHECK(warm.exit_code == cold.exit_code);
    }
}

TEST_CASE("The exit codes a warm box gives are a cold box's: 0, sys.exit's, 1 for an exception, 128 + a signal")
{
    CHECK(run_warm_step(warm_box_timer_line(3.0) + "pass\n").exit_code == 0);
    CHECK(run_warm_step(warm_box_timer_line(3.0) + "import sys\nsys.exit(3)\n").exit_code == 3);
    CHECK(run_warm_step(warm_box_timer_line(3.0) + "raise ValueError\n").exit_code == 1);
    CHECK(run_warm_step(warm_box_timer_line(3.0) + "raise KeyboardInterrupt\n").exit_code == 130);
    CHECK(run_warm_step(warm_box_timer_line(3.0) + "import os\nos.kill(os.getpid(), 9)\n").exit_code == 137);
}

TEST_CASE("A warm box's timer counts from the line: the program is killed when it passes")
{
    const auto started = std::chrono::steady_clock::now();
    const auto ran = run_warm_step(warm_box_timer_line(0.5) + "import time\ntime.sleep(10)\n");
    const auto took = std::chrono::steady_clock::now() - started;
    CHECK(ran.exit_code == 137);
    CHECK(took >= std::chrono::milliseconds(500));
    CHECK(took < std::chrono::seconds(5));
}

TEST_CASE("A warm box's timer still fires when the program signals PID 1, its parent, and stops every process it can")
{
    // PID 1 (the timer) sets no signal handler, so from inside no signal reaches it; kill(-1)
    // reaches every other process, the program included (ESRCH when there is no other).
    const std::string program = "import os, signal, time\n"
                                "assert os.getppid() == 1\n"
                                "for sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM, signal.SIGINT, "
                                "signal.SIGALRM, signal.SIGCHLD, signal.SIGHUP, signal.SIGUSR1):\n"
                                "    os.kill(1, sig)\n"
                                "print('still here', flush=True)\n"
                                "end = time.monotonic() + 2\n"
                                "while time.monotonic() < end:\n"
                                "    os.kill(1, signal.SIGCHLD)\n"
                                "try:\n"
                                "    os.kill(-1, signal.SIGSTOP)\n"
                                "except ProcessLookupError:\n"
                                "    pass\n"
                                "time.sleep(10)\n";
    const auto started = std::chrono::steady_clock::now();
    const auto ran = run_warm_step(warm_box_timer_line(1.0) + program);
    const auto took = std::chrono::steady_clock::now() - started;
    INFO("stderr: " << ran.error_output);
    CHECK(ran.output == "still here\n");
    CHECK(ran.exit_code == 137);
    CHECK(took >= std::chrono::seconds(1));
    CHECK(took < std::chrono::seconds(5));
}

TEST_CASE("A cold box's timer kills the program when it passes, with exit 137")
{
    const auto started = std::chrono::steady_clock::now();
    const auto ran = run_box_like(box_command(0.1), "import time\ntime.sleep(10)\n");
    const auto took = std::chrono::steady_clock::now() - started;
    CHECK(ran.exit_code == 137);
    CHECK(took >= std::chrono::milliseconds(1100));
    CHECK(took < std::chrono::seconds(5));
}

TEST_CASE("Neither a cold nor a warm box's first process lets the program of its uid into its memory")
{
    // EACCES (13) for the files of /proc, EPERM (1) for process_vm_writev: the first process
    // is undumpable, and the program has no CAP_SYS_PTRACE. (In a box the seccomp profile
    // refuses process_vm_writev before the kernel looks.)
    const std::string expected = "10000 13 13 13 1\n";
    const auto cold = run_box_like_unprivileged(box_command(2.0), k_into_pid1);
    INFO("cold stderr: " << cold.error_output);
    CHECK(cold.output == expected);
    CHECK(cold.exit_code == 0);
    const auto warm = run_box_like_unprivileged(warm_box_command(), warm_box_timer_line(3.0) + k_into_pid1);
    INFO("warm stderr: " << warm.error_output);
    CHECK(warm.output == expected);
    CHECK(warm.exit_code == 0);
}

TEST_CASE("A warm box whose stdin closes before a line, or whose line is not a number, ends with 1 and runs no "
          "program")
{
    for (const auto* input : {"", "3", "x\nprint(1)\n", "-1\nprint(1)\n", "\nprint(1)\n"}) {
        INFO("input: " << input);
        const auto ran = run_warm_step(input);
        CHECK(ran.exit_code == 1);
        CHECK(ran.output.empty());
    }
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
        "memfd_create", "memfd_secret",
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
