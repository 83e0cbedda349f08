// docs/hostile.md cases 41, 42, 48, 55 and 56: hardening found by held-out hostile programs. PyBox's
// seccomp profile refuses tracing and the other kernel surfaces it removes, the paths a box can
// read name neither the user's home nor the user, and no resource limit can be raised. Each
// runs through the real client, daemon and engine, and each case ends clean (check_ended_clean).
#include "tests/hostile/hostile.hpp"
#include "tests/integration/hostile_programs.hpp"
#include "tests/support/unfinished_command.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string_view>
#include <vector>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;

namespace {

// The output of `argv` without its trailing newline.
std::string command_output(const std::vector<std::string>& argv)
{
    auto result = run_to_end(argv);
    REQUIRE(result.exit_code == 0);
    std::string text = result.output;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
}

}  // namespace

// docs/hostile.md case 41
TEST_CASE("ptrace, process_vm_readv/writev, userfaultfd, io_uring and widened personalities fail with EPERM and the program carries on")
{
    // Each call is one that would succeed without PyBox's profile here (yama ptrace_scope 0,
    // a user-mode-only userfaultfd, reading the program's own memory), so EPERM is the profile's.
    const auto run = run_json(R"PY(
import ctypes, json, os, platform, signal, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.personality.restype = ctypes.c_int
libc.personality.argtypes = [ctypes.c_ulong]
numbers = {'x86_64': {'process_vm_readv': 310, 'process_vm_writev': 311, 'userfaultfd': 323, 'io_uring_setup': 425},
           'aarch64': {'process_vm_readv': 270, 'process_vm_writev': 271, 'userfaultfd': 282, 'io_uring_setup': 425}}[platform.machine()]
PTRACE_TRACEME, PTRACE_ATTACH, PTRACE_SEIZE = 0, 16, 0x4206
def attempt(call):
    ctypes.set_errno(0)
    return 'succeeded' if call() != -1 else ctypes.get_errno()
class iovec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
source = ctypes.create_string_buffer(b'secret!', 8)
target = ctypes.create_string_buffer(8)
local, remote = iovec(ctypes.addressof(target), 8), iovec(ctypes.addressof(source), 8)
def vm_call(name):
    return lambda: libc.syscall(ctypes.c_long(numbers[name]), ctypes.c_long(os.getpid()), ctypes.byref(local),
                                ctypes.c_ulong(1), ctypes.byref(remote), ctypes.c_ulong(1), ctypes.c_ulong(0))
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
io_uring_params = (ctypes.c_uint32 * 30)()
out = {
    'ptrace_attach_pid1': attempt(lambda: libc.ptrace(PTRACE_ATTACH, 1, None, None)),
    'ptrace_seize_pid1': attempt(lambda: libc.ptrace(PTRACE_SEIZE, 1, None, None)),
    'ptrace_seize_child': attempt(lambda: libc.ptrace(PTRACE_SEIZE, child, None, None)),
    'ptrace_traceme': attempt(lambda: libc.ptrace(PTRACE_TRACEME, 0, None, None)),
    'process_vm_readv': attempt(vm_call('process_vm_readv')),
    'process_vm_writev': attempt(vm_call('process_vm_writev')),
    'userfaultfd': attempt(lambda: libc.syscall(ctypes.c_long(numbers['userfaultfd']), ctypes.c_long(1))),
    'io_uring_setup': attempt(lambda: libc.syscall(ctypes.c_long(numbers['io_uring_setup']), ctypes.c_long(1), ctypes.byref(io_uring_params))),
    'personality_read_implies_exec': attempt(lambda: libc.personality(0x0400000)),
    'personality_addr_no_randomize': attempt(lambda: libc.personality(0x0040000)),
    'personality_query': attempt(lambda: libc.personality(0xffffffff)),
}
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
out['read_back'] = target.raw.decode('latin-1')
out['pid1'] = open('/proc/1/cmdline', 'rb').read().split(b'\0')[0].decode()
out['pid1_traced_by'] = [line.split()[1] for line in open('/proc/1/status') if line.startswith('TracerPid:')][0]
print(json.dumps(out))
)PY");
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    for (const char* call : {"ptrace_attach_pid1", "ptrace_seize_pid1", "ptrace_seize_child", "ptrace_traceme",
                             "process_vm_readv", "process_vm_writev", "userfaultfd", "io_uring_setup",
                             "personality_read_implies_exec", "personality_addr_no_randomize"}) {
        INFO(call << " -> " << json::serialize(found.at(call)));
        CHECK(found.at(call) == k_eperm);
    }
    CHECK(found.at("personality_query") == "succeeded");  // the default's allowed personalities stay
    CHECK(std::string_view(found.at("read_back").as_string()) == std::string_view("\0\0\0\0\0\0\0\0", 8));
    // The box timer is the first process (Perl, in a cold box as in a warm one)...
    CHECK(found.at("pid1") == "perl");
    CHECK(found.at("pid1_traced_by") == "0");              // ...and nobody traces it
    CHECK(mechanism(run.receipt) == "TARGET_EXIT_OBSERVED");
    check_ended_clean();
}

// docs/hostile.md case 42
TEST_CASE("mountinfo, cgroup and the files the engine mounts name neither the user's home, the runtime folder, the user nor the installation")
{
    const auto run = run_json(mount_probe_program());
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    const std::string user = command_output({"/usr/bin/id", "-un"});
    // The installation ID (the owner label of every box) stays out too; the run's cgroup path
    // names only a digest of it.
    std::vector<std::string> forbidden = {runtime_home().string(), ".pybox", user,
                                          std::string(run.receipt.at("identity").at("installation_id").as_string())};
    if (const char* home = std::getenv("HOME"); home != nullptr && std::string_view(home).size() > 1)
        forbidden.emplace_back(home);
    for (const auto& naming : texts_naming(found, forbidden)) FAIL_CHECK("the program read: " << naming);
    check_ended_clean();
}

// docs/hostile.md case 48
TEST_CASE("No resource limit can be raised and core dumps stay off")
{
    const auto run = run_json(R"PY(
import ctypes, errno, json, resource
libc = ctypes.CDLL(None, use_errno=True)
class rlimit(ctypes.Structure):
    _fields_ = [('soft', ctypes.c_ulong), ('hard', ctypes.c_ulong)]
def try_set(resource_id, soft, hard, pid=0):
    ctypes.set_errno(0)
    if libc.prlimit(pid, resource_id, ctypes.byref(rlimit(soft, hard)), None) == 0:
        return 'raised'
    return errno.errorcode[ctypes.get_errno()]
out = {'core': resource.getrlimit(resource.RLIMIT_CORE), 'nofile': resource.getrlimit(resource.RLIMIT_NOFILE)}
out['raise'] = {
    'core_soft': try_set(resource.RLIMIT_CORE, 1, 0),
    'core_hard': try_set(resource.RLIMIT_CORE, 0, resource.RLIM_INFINITY),
    'core_both': try_set(resource.RLIMIT_CORE, 1 << 20, 1 << 20),
    'nofile_hard': try_set(resource.RLIMIT_NOFILE, 128, 4096),
    'nofile_pid1': try_set(resource.RLIMIT_NOFILE, 256, 256, pid=1),
    'core_pid1': try_set(resource.RLIMIT_CORE, 1, 1, pid=1),
}
for name in dir(resource):
    if name.startswith('RLIMIT_'):
        soft, hard = resource.getrlimit(getattr(resource, name))
        if hard != resource.RLIM_INFINITY:
            out['raise'][name + '_hard'] = try_set(getattr(resource, name), soft, hard + 1)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 128))  # lowering is allowed
out['nofile_after'] = resource.getrlimit(resource.RLIMIT_NOFILE)
out['core_after'] = resource.getrlimit(resource.RLIMIT_CORE)
out['pid1_core'] = [l.split()[-3:-1] for l in open('/proc/1/limits') if l.startswith('Max core file size')][0]
print(json.dumps(out))
)PY");
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    CHECK(found.at("core") == json::array{0, 0});
    CHECK(found.at("nofile") == json::array{128, 128});
    const auto& raise = found.at("raise").as_object();
    CHECK(raise.contains("RLIMIT_CORE_hard"));
    CHECK(raise.contains("RLIMIT_NOFILE_hard"));
    for (const auto& [attempt, outcome] : raise) {
        INFO(attempt << " -> " << outcome);
        // A soft limit above the hard one is invalid; anything else is refused for want of
        // CAP_SYS_RESOURCE.
        CHECK((outcome == "EPERM" || (attempt == "core_soft" && outcome == "EINVAL")));
    }
    CHECK(found.at("nofile_after") == json::array{64, 128});
    CHECK(found.at("core_after") == json::array{0, 0});
    CHECK(found.at("pid1_core") == json::array{"0", "0"});
    check_ended_clean();
}

// docs/hostile.md case 55
TEST_CASE("memfd_create is refused, so no file the program writes can be executed, and ctypes callbacks still work")
{
    // Each exec runs in a child that exits 0 when the exec'd /bin/true ran, or 100 + errno.
    const auto run = run_json(memfd_exec_program());
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    constexpr int k_refused_eacces = 100 + 13;
    CHECK(found.at("memfd_create") == k_eperm);
    CHECK(found.at("memfd_create_raw") == k_eperm);
    CHECK(found.at("memfd_exec") == "no memfd");
    CHECK(found.at("exec_proc_self_fd") == k_refused_eacces);
    CHECK(found.at("execveat_written") == k_refused_eacces);
    CHECK(found.at("execveat_bin_true") == 0);
    CHECK(found.at("callback_sorted") == json::array{1, 2, 3, 4, 5});
    check_ended_clean();
}

// docs/hostile.md case 56
TEST_CASE("The host's CPU, load, memory and boot counters read as empty, while the CPU count still answers")
{
    const auto run = run_json(host_counters_program());
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    // Each masked file reads as empty, or is absent where this kernel has none (schedstat
    // without CONFIG_SCHEDSTATS).
    for (const auto& [path, text] : found.at("files").as_object()) {
        INFO(std::string(path) << ": " << json::serialize(text));
        CHECK((text == "" || text == "error 2"));
    }
    // An empty read-only folder, or none where the kernel has no pressure accounting.
    INFO("pressure: " << json::serialize(found.at("pressure")));
    CHECK((found.at("pressure") == json::array{} || found.at("pressure") == "error 2"));
    CHECK(found.at("cpu_count").to_number<int>() >= 1);
    CHECK(found.at("affinity").to_number<int>() >= 1);
    check_ended_clean();
}
