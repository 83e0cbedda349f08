// docs/hostile.md cases 1-12: programs that try to escape the box or reach past it. Each runs
// through the real client, daemon and engine, and each case ends clean (check_ended_clean).
#include "tests/hostile/hostile.hpp"
#include "tests/integration/hostile_programs.hpp"

#include "common/ids.hpp"
#include "common/process.hpp"
#include "tests/hostile/raw_client.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;

namespace {

// `python_list` of the host's own addresses (hostname -I), for the program text.
std::string host_addresses_python_list()
{
    auto listed = run_process({"/usr/bin/hostname", "-I"});
    REQUIRE(listed.has_value());
    std::istringstream words(listed->output);
    std::string list = "[";
    for (std::string word; words >> word;) list += "'" + word + "', ";
    return list + "]";
}

}  // namespace

// docs/hostile.md case 1
TEST_CASE("The program runs as uid and gid 10000 with no other group, no capabilities, no new privileges and seccomp")
{
    const auto run = run_json(R"PY(
import json, os
status = {}
for line in open('/proc/self/status').read().splitlines():
    name, _, value = line.partition(':')
    status[name] = value.strip()
keys = ['Uid', 'Gid', 'Groups', 'CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb', 'NoNewPrivs', 'Seccomp']
print(json.dumps({'status': {k: status.get(k) for k in keys}, 'groups': os.getgroups()}))
)PY");
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    const auto& status = found.at("status");
    CHECK(status.at("Uid") == "10000\t10000\t10000\t10000");
    CHECK(status.at("Gid") == "10000\t10000\t10000\t10000");
    // The engine lists the primary gid as the only supplementary group (moby's fix for
    // CVE-2022-36109); any other group would be a real supplementary group.
    CHECK((status.at("Groups") == "" || status.at("Groups") == "10000"));
    for (const auto& group : found.at("groups").as_array()) CHECK(group == 10000);
    for (const char* cap : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
        INFO(cap);
        CHECK(status.at(cap) == "0000000000000000");
    }
    CHECK(status.at("NoNewPrivs") == "1");
    CHECK(status.at("Seccomp") == "2");
    check_ended_clean();
}

// docs/hostile.md case 2
TEST_CASE("setuid(0), setgid(0), seteuid(0) and setgroups([0]) fail with EPERM and the euid stays 10000")
{
    const auto run = run_json(R"PY(
import json, os
out = {}
for name, call in [('setuid', lambda: os.setuid(0)), ('setgid', lambda: os.setgid(0)),
                   ('seteuid', lambda: os.seteuid(0)), ('setgroups', lambda: os.setgroups([0]))]:
    try:
        call()
        out[name] = 'succeeded'
    except OSError as e:
        out[name] = e.errno
out['uid'] = os.getuid(); out['euid'] = os.geteuid(); out['egid'] = os.getegid()
print(json.dumps(out))
)PY");
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    for (const char* call : {"setuid", "setgid", "seteuid", "setgroups"}) {
        INFO(call);
        CHECK(found.at(call) == k_eperm);
    }
    CHECK(found.at("uid") == 10000);
    CHECK(found.at("euid") == 10000);
    CHECK(found.at("egid") == 10000);
    check_ended_clean();
}

// docs/hostile.md case 3
TEST_CASE("Kernel-surface syscalls made through ctypes fail with EPERM or ENOSYS and the program carries on")
{
    const auto run = run_json(R"PY(
import ctypes, json, platform
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
numbers = {'x86_64': {'keyctl': 250, 'bpf': 321, 'perf_event_open': 298, 'init_module': 175},
           'aarch64': {'keyctl': 219, 'bpf': 280, 'perf_event_open': 241, 'init_module': 105}}[platform.machine()]
def attempt(call):
    ctypes.set_errno(0)
    return 'succeeded' if call() >= 0 else ctypes.get_errno()
perf_attr = (ctypes.c_uint32 * 32)()
perf_attr[0] = 1      # PERF_TYPE_SOFTWARE
perf_attr[1] = 112    # size of the attribute struct
bpf_attr = (ctypes.c_uint32 * 32)(1, 4, 4, 1)  # BPF_MAP_TYPE_HASH, 4-byte keys and values, 1 entry
module = ctypes.create_string_buffer(64)
out = {
    'unshare': attempt(lambda: libc.unshare(0x10000000)),
    'mount': attempt(lambda: libc.mount(b'none', b'/tmp', b'tmpfs', ctypes.c_ulong(0), None)),
    'keyctl': attempt(lambda: libc.syscall(ctypes.c_long(numbers['keyctl']), ctypes.c_long(0), ctypes.c_long(-3), ctypes.c_long(1))),
    'bpf': attempt(lambda: libc.syscall(ctypes.c_long(numbers['bpf']), ctypes.c_long(0), ctypes.byref(bpf_attr), ctypes.c_long(128))),
    'perf_event_open': attempt(lambda: libc.syscall(ctypes.c_long(numbers['perf_event_open']), ctypes.byref(perf_attr), ctypes.c_long(0), ctypes.c_long(-1), ctypes.c_long(-1), ctypes.c_long(0))),
    'init_module': attempt(lambda: libc.syscall(ctypes.c_long(numbers['init_module']), module, ctypes.c_long(64), ctypes.c_char_p(b''))),
}
print(json.dumps(out))
)PY");
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    for (const char* call : {"unshare", "mount", "keyctl", "bpf", "perf_event_open", "init_module"}) {
        INFO(call << " -> " << json::serialize(found.at(call)));
        CHECK((found.at(call) == k_eperm || found.at(call) == k_enosys));
    }
    check_ended_clean();
}

// docs/hostile.md case 4
TEST_CASE("clock_settime and settimeofday fail with EPERM and the host clock is unchanged")
{
    const auto before = std::chrono::system_clock::now();
    const auto run = run_json(R"PY(
import ctypes, json, time
out = {}
try:
    time.clock_settime(time.CLOCK_REALTIME, 946684800.0)
    out['clock_settime'] = 'succeeded'
except OSError as e:
    out['clock_settime'] = e.errno
class timeval(ctypes.Structure):
    _fields_ = [('tv_sec', ctypes.c_long), ('tv_usec', ctypes.c_long)]
libc = ctypes.CDLL(None, use_errno=True)
out['settimeofday'] = 'succeeded' if libc.settimeofday(ctypes.byref(timeval(946684800, 0)), None) == 0 else ctypes.get_errno()
out['box_time'] = time.time()
print(json.dumps(out))
)PY");
    const auto after = std::chrono::system_clock::now();
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    CHECK(found.at("clock_settime") == k_eperm);
    CHECK(found.at("settimeofday") == k_eperm);
    // The host clock moved forward by about the length of the run, not back to the year 2000.
    CHECK(after >= before);
    CHECK(after - before < std::chrono::seconds(30));
    const double host_now = std::chrono::duration<double>(after.time_since_epoch()).count();
    CHECK(found.at("box_time").to_number<double>() > host_now - 60);
    check_ended_clean();
}

// docs/hostile.md case 5
TEST_CASE("The network holds only lo: TCP to 1.1.1.1 and the host fails, DNS fails, packet and raw sockets are refused")
{
    const auto run = run_json(R"PY(
import errno, json, socket
HOST_ADDRESSES = )PY" + host_addresses_python_list() + R"PY(
out = {'interfaces': sorted(name for _, name in socket.if_nameindex())}
def tcp(host, port):
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(0.5)
    try:
        s.connect((host, port))
        return 'connected'
    except socket.timeout:
        return 'timeout'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    finally:
        s.close()
out['tcp'] = {f'{h} {p}': tcp(h, p) for h in ['1.1.1.1', '8.8.8.8'] + HOST_ADDRESSES for p in (22, 53, 80, 443)}
try:
    socket.getaddrinfo('example.com', 443)
    out['dns'] = 'resolved'
except socket.gaierror as e:
    out['dns'] = 'failed'
def make(*args):
    try:
        socket.socket(*args).close()
        return 'created'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
out['packet'] = make(socket.AF_PACKET, socket.SOCK_RAW, 0x0300)
out['packet_dgram'] = make(socket.AF_PACKET, socket.SOCK_DGRAM, 0x0300)
out['raw'] = make(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
out['raw6'] = make(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
print(json.dumps(out))
)PY",
                              {"--timeout", "10"});
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    CHECK(found.at("interfaces") == json::array{"lo"});
    for (const auto& [target, outcome] : found.at("tcp").as_object()) {
        INFO(target << " -> " << outcome);
        CHECK((outcome == "ENETUNREACH" || outcome == "EHOSTUNREACH" || outcome == "EADDRNOTAVAIL"));
    }
    CHECK(found.at("dns") == "failed");
    CHECK(found.at("packet") == "EPERM");
    CHECK(found.at("packet_dgram") == "EPERM");
    CHECK(found.at("raw") == "EPERM");
    CHECK(found.at("raw6") == "EPERM");
    check_ended_clean();
}

// docs/hostile.md case 6
TEST_CASE("The engine's socket, the daemon's socket and the host's abstract unix names are not reachable")
{
    const std::string abstract_name = "pybox-hostile-" + random_id_128();
    const AbstractListener listener(abstract_name);
    REQUIRE(listener.reachable_from_host());
    const auto engine_socket = (runtime_home() / "engine" / "docker.sock").string();
    const auto run = run_json(unix_socket_probe_program(
        {engine_socket, daemon_socket().string(), "/var/run/docker.sock", "/run/docker.sock",
         "/run/containerd/containerd.sock"},
        abstract_name));
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    CHECK(found.as_object().size() == 6);
    for (const auto& [address, outcome] : found.as_object()) {
        INFO(address << " -> " << outcome);
        CHECK(outcome != "connected");
    }
    CHECK(found.at("abstract") == "ECONNREFUSED");
    check_ended_clean();
}

// docs/hostile.md case 7
TEST_CASE("/proc/sysrq-trigger, /proc/sys and every cgroup file refuse to be opened for writing")
{
    // Files are only opened for writing, never written, so a failure here cannot harm the host.
    const auto run = run_json(R"PY(
import errno, json, os
def open_for_writing(path):
    try:
        fd = os.open(path, os.O_WRONLY)
        os.close(fd)
        return 'opened'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
targets = ['/proc/sysrq-trigger', '/proc/sys/kernel/core_pattern', '/proc/sys/kernel/hostname',
           '/proc/sys/vm/drop_caches', '/proc/sys/net/ipv4/ip_forward', '/proc/sys/kernel/modprobe']
out = {'proc': {p: open_for_writing(p) for p in targets}}
cgroup_files = []
for root, dirs, files in os.walk('/sys/fs/cgroup'):
    cgroup_files += [os.path.join(root, f) for f in files]
out['cgroup_files'] = len(cgroup_files)
out['cgroup_opened'] = [p for p in cgroup_files if open_for_writing(p) == 'opened']
print(json.dumps(out))
)PY",
                              {"--timeout", "10"});
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    for (const auto& [path, outcome] : found.at("proc").as_object()) {
        INFO(path << " -> " << outcome);
        CHECK(outcome != "opened");
    }
    CHECK(found.at("cgroup_files").as_int64() > 0);
    CHECK(found.at("cgroup_opened").as_array().empty());
    check_ended_clean();
}

// docs/hostile.md case 8
TEST_CASE("Writes outside /tmp fail with EROFS and a file written to /tmp cannot be executed")
{
    const auto run = run_json(R"PY(
import errno, json, os, shutil, subprocess
def create(path):
    try:
        with open(path, 'w') as f:
            f.write('x')
        return 'written'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
out = {'create': {d: create(d + '/pybox-probe') for d in ['', '/etc', '/var/tmp', '/home', '/usr/lib', '/var/lib']}}
out['root_home'] = create('/root/pybox-probe')
shutil.copyfile('/bin/true', '/tmp/true')
os.chmod('/tmp/true', 0o755)
with open('/tmp/script', 'w') as f:
    f.write('#!/bin/sh\nexit 0\n')
os.chmod('/tmp/script', 0o755)
def execute(path):
    try:
        return 'ran, exit %d' % subprocess.run([path]).returncode
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
out['exec'] = {p: execute(p) for p in ['/tmp/true', '/tmp/script']}
out['control'] = execute('/bin/true')
print(json.dumps(out))
)PY");
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    for (const auto& [dir, outcome] : found.at("create").as_object()) {
        INFO((dir.empty() ? "/" : std::string(dir)) << " -> " << outcome);
        CHECK(outcome == "EROFS");
    }
    // /root is not even searchable for uid 10000, so the lookup fails before the mount is checked.
    CHECK((found.at("root_home") == "EROFS" || found.at("root_home") == "EACCES"));
    CHECK(found.at("exec").at("/tmp/true") == "EACCES");
    CHECK(found.at("exec").at("/tmp/script") == "EACCES");
    CHECK(found.at("control") == "ran, exit 0");
    check_ended_clean();
}

// docs/hostile.md case 9
TEST_CASE("Markers written to /tmp and /dev/shm are gone in the next run")
{
    const std::string marker = "pybox-marker-" + random_id_128();
    const auto first = run_json(marker_writing_program(marker));
    REQUIRE(first.process.exit_code == 0);
    CHECK(program_json(first).at("/tmp") == "written");
    const auto second = run_json(marker_listing_program());
    REQUIRE(second.process.exit_code == 0);
    const auto found = program_json(second);
    CHECK(found.at("/tmp").as_array().empty());
    for (const auto& [dir, entries] : found.as_object()) {
        INFO(dir << ": " << entries);
        CHECK(entries.as_array().empty());
    }
    check_ended_clean();
}

// docs/hostile.md case 10
TEST_CASE("Only fds 0-2 are open at start and the environment holds no host or daemon variables")
{
    const auto run = run_json(R"PY(
import json, os
fds = []
for fd in range(0, 4096):
    try:
        os.fstat(fd)
        fds.append(fd)
    except OSError:
        pass
print(json.dumps({'fds': fds, 'env': dict(os.environ)}))
)PY");
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    CHECK(found.at("fds") == json::array{0, 1, 2});
    // Exactly what docs/reference.md states: the daemon's Env plus the engine's HOSTNAME.
    CHECK(found.at("env") == json::object{{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                                          {"LANG", "C.UTF-8"},
                                          {"HOME", "/tmp"},
                                          {"HOSTNAME", "pybox"}});
    check_ended_clean();
}

// docs/hostile.md case 11
TEST_CASE("kill(-1, SIGKILL) and signals to PID 1 end only the box, and the receipt says the program died of SIGKILL")
{
    const int daemon = daemon_pid();
    const auto run = run_json(R"PY(
import os, signal, time
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
os.kill(-1, signal.SIGKILL)
_, status = os.waitpid(child, 0)
print('child killed by', os.WTERMSIG(status) if os.WIFSIGNALED(status) else 'nothing', flush=True)
os.kill(1, signal.SIGKILL)
print('pid 1 ignored SIGKILL', flush=True)
os.kill(0, signal.SIGKILL)
time.sleep(5)
print('not reached')
)PY");
    CHECK(captured(run.receipt, "stdout") == "child killed by 9\npid 1 ignored SIGKILL\n");
    CHECK(run.process.exit_code == 137);
    const auto& termination = run.receipt.at("observed").at("termination");
    CHECK(mechanism(run.receipt) == "TARGET_EXIT_OBSERVED");
    CHECK(termination.at("exit_code") == 137);
    // The kernel recorded the program's death by SIGKILL, sent from inside the box (its first
    // process outlived it), so the sender is not known.
    CHECK(termination.at("signal") == 9);
    CHECK(termination.at("signal_source") == "wait_status");
    CHECK(termination.at("inferred_signal").is_null());
    CHECK(termination.at("deadline_kill_sent") == false);
    CHECK(run.receipt.at("observed").at("engine_state").at("OOMKilled") == false);
    CHECK(process_alive(daemon));
    check_ended_clean();
}

// docs/hostile.md case 12
TEST_CASE("A segfault through ctypes is reported as exit 139 by signal 11 as the kernel recorded it and leaves no core file on the host")
{
    const auto core_files = [] {
        std::size_t count = 0;
        for (const auto& dir : {std::filesystem::current_path(), runtime_home(), std::filesystem::path("/")})
            for (const auto& entry : std::filesystem::directory_iterator(dir))
                if (entry.path().filename().string().rfind("core", 0) == 0 && entry.is_regular_file()) ++count;
        return count;
    };
    const auto cores_before = core_files();
    const auto run = run_json(R"PY(
import ctypes
print('about to crash', flush=True)
ctypes.string_at(0)
print('not reached')
)PY");
    CHECK(captured(run.receipt, "stdout") == "about to crash\n");
    CHECK(run.process.exit_code == 139);
    CHECK(mechanism(run.receipt) == "TARGET_EXIT_OBSERVED");
    CHECK(run.receipt.at("observed").at("termination").at("exit_code") == 139);
    CHECK(run.receipt.at("observed").at("termination").at("signal") == 11);
    CHECK(run.receipt.at("observed").at("termination").at("signal_source") == "wait_status");
    CHECK(run.receipt.at("observed").at("termination").at("inferred_signal").is_null());
    CHECK(core_files() == cores_before);
    check_ended_clean();
}
