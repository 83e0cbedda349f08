// The hostile catalogue's policy cases that apply to a Pod (docs/hostile.md; the Docker side is
// tests/hostile/), run on the Kubernetes test cluster through the real client and daemon. Each
// run is watched (kube_harness.hpp run_watched: the receipt held against the apiserver's record
// of its Pod), and each case checks what the program saw from inside against what the receipt
// says. Cheap probes share one program, each finding under its own key. Tagged [kube].
#include "common/files.hpp"
#include "common/ids.hpp"
#include "common/process.hpp"
#include "tests/integration/hostile_programs.hpp"
#include "tests/integration/kube_harness.hpp"
#include "tests/support/cluster_env.hpp"

#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;

namespace {

constexpr int k_eperm = 1;
constexpr int k_enosys = 38;

// Python: the pids of the box's feeder (the one perl process besides PID 1, docs/kubernetes.md
// "The Pod").
constexpr const char* k_find_feeder = R"PY(
import os
def feeders():
    return [int(p) for p in os.listdir('/proc') if p.isdigit() and p != '1' and int(p) != os.getpid()
            and open('/proc/%s/cmdline' % p, 'rb').read().startswith(b'perl')]
)PY";

const json::value& effective_container(const JsonRun& run)
{
    return run.receipt.at("observed").at("effective_policy").at("spec").at("containers").at(0);
}

// `nsenter -t K8S_NS_PID -n -- argv...`: argv in the test cluster's node's network namespace
// (docs/testing.md), where the kubelet and the node's container runtime run.
std::vector<std::string> in_node_network(std::vector<std::string> argv)
{
    std::vector<std::string> command{"/usr/bin/nsenter", "-t", cluster_env("K8S_NS_PID"), "-n", "--"};
    command.insert(command.end(), argv.begin(), argv.end());
    return command;
}

// The unix sockets of the node's network namespace (/proc/net/unix there): the paths of those
// bound to a file, and the names of the abstract ones ('@' first).
std::set<std::string> node_unix_sockets()
{
    const auto listed = run_process(in_node_network({"cat", "/proc/net/unix"}));
    REQUIRE(listed.has_value());
    REQUIRE(listed->exit_code == 0);
    std::set<std::string> sockets;
    std::istringstream lines(listed->output);
    std::string line;
    std::getline(lines, line);  // the header
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        std::vector<std::string> words;
        for (std::string word; fields >> word;) words.push_back(word);
        if (words.size() == 8) sockets.insert(words.back());
    }
    return sockets;
}

// Listens on an abstract unix socket name in the node's network namespace for as long as it
// lives (a Python process started there, killed at the end of its scope), as the node's
// container runtime's shims may.
class NodeAbstractListener {
public:
    explicit NodeAbstractListener(const std::string& name)
        : m_log(runtime_home().string() + "-node-listener-" + name + ".log")
    {
        auto started = spawn_detached(in_node_network({"/usr/bin/python3", "-c",
                                                       "import socket, time\n"
                                                       "s = socket.socket(socket.AF_UNIX)\n"
                                                       "s.bind('\\0" + name + "')\n"
                                                       "s.listen(8)\n"
                                                       "time.sleep(600)\n"}),
                                      m_log);
        REQUIRE(started.has_value());
        m_pid = *started;
        REQUIRE(within(std::chrono::seconds(10), [&] { return node_unix_sockets().contains("@" + name); }));
    }
    ~NodeAbstractListener()
    {
        send_signal(m_pid, k_signal_kill);
        std::error_code ignored;
        std::filesystem::remove(m_log, ignored);
    }
    NodeAbstractListener(const NodeAbstractListener&) = delete;
    NodeAbstractListener& operator=(const NodeAbstractListener&) = delete;

private:
    std::filesystem::path m_log;
    int m_pid = -1;
};

void check_stopped_at_deadline(const JsonRun& run)
{
    CHECK(termination_mechanism(run) == "DEADLINE_KILL");
    CHECK(run.process.exit_code == 124);
    CHECK(run.receipt.at("observed").at("termination").at("signal_source") == "pybox_kill");
    CHECK(run.receipt.at("cleanup").at("removed") == true);
}

}  // namespace

// docs/hostile.md cases 1-4, 7, 8, 10, 41 and 48, as the program sees them in a Pod, against the
// Pod settings the receipt read back.
TEST_CASE("A program in a Pod has no privileges, no kernel surfaces, a read-only root and the policy's limits, as "
          "the receipt's Pod settings say",
          "[kube]")
{
    const auto run = run_watched(R"PY(
import ctypes, errno, json, os, platform, resource, shutil, subprocess
def name(e):
    return errno.errorcode.get(e, str(e))
def attempt(call):
    try:
        call()
        return 'succeeded'
    except OSError as e:
        return name(e.errno)
out = {}
status = dict(line.split(':', 1) for line in open('/proc/self/status').read().splitlines())
out['status'] = {k: status[k].strip() for k in ['Uid', 'Gid', 'CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb',
                                                'NoNewPrivs', 'Seccomp']}
out['groups'] = os.getgroups()
out['set_ids'] = {'setuid': attempt(lambda: os.setuid(0)), 'setgid': attempt(lambda: os.setgid(0)),
                  'setgroups': attempt(lambda: os.setgroups([0]))}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
numbers = {'x86_64': {'keyctl': 250, 'bpf': 321, 'perf_event_open': 298, 'init_module': 175},
           'aarch64': {'keyctl': 219, 'bpf': 280, 'perf_event_open': 241, 'init_module': 105}}[platform.machine()]
def call(f):
    ctypes.set_errno(0)
    return 'succeeded' if f() >= 0 else ctypes.get_errno()
perf_attr = (ctypes.c_uint32 * 32)(1, 112)
bpf_attr = (ctypes.c_uint32 * 32)(1, 4, 4, 1)
out['kernel'] = {
    'unshare': call(lambda: libc.unshare(0x10000000)),
    'mount': call(lambda: libc.mount(b'none', b'/tmp', b'tmpfs', ctypes.c_ulong(0), None)),
    'keyctl': call(lambda: libc.syscall(ctypes.c_long(numbers['keyctl']), ctypes.c_long(0), ctypes.c_long(-3), ctypes.c_long(1))),
    'bpf': call(lambda: libc.syscall(ctypes.c_long(numbers['bpf']), ctypes.c_long(0), ctypes.byref(bpf_attr), ctypes.c_long(128))),
    'perf_event_open': call(lambda: libc.syscall(ctypes.c_long(numbers['perf_event_open']), ctypes.byref(perf_attr), ctypes.c_long(0), ctypes.c_long(-1), ctypes.c_long(-1), ctypes.c_long(0))),
    'init_module': call(lambda: libc.syscall(ctypes.c_long(numbers['init_module']), ctypes.create_string_buffer(64), ctypes.c_long(64), ctypes.c_char_p(b''))),
    'ptrace_pid1': call(lambda: libc.ptrace(0x4206, 1, None, None)),
    'clock_settime': attempt(lambda: __import__('time').clock_settime(0, 946684800.0)),
}
def create(path):
    try:
        with open(path, 'w') as f:
            f.write('x')
        return 'written'
    except OSError as e:
        return name(e.errno)
out['writes'] = {d or '/': create(d + '/pybox-probe') for d in ['', '/etc', '/var/tmp', '/home', '/usr/lib']}
def open_for_writing(path):
    try:
        os.close(os.open(path, os.O_WRONLY))
        return 'opened'
    except OSError as e:
        return name(e.errno)
out['proc'] = {p: open_for_writing(p) for p in ['/proc/sysrq-trigger', '/proc/sys/kernel/core_pattern',
                                                 '/proc/sys/vm/drop_caches', '/proc/sys/kernel/hostname']}
out['limits'] = {n: list(resource.getrlimit(getattr(resource, n))) for n in ['RLIMIT_NOFILE', 'RLIMIT_CORE']}
def raise_limit(limit, value):
    try:
        resource.setrlimit(limit, (value, value))
        return 'raised'
    except (ValueError, OSError):
        return 'refused'
out['raise'] = {'core': raise_limit(resource.RLIMIT_CORE, 1 << 20), 'nofile': raise_limit(resource.RLIMIT_NOFILE, 4096)}
fds = []
for fd in range(128):
    try:
        os.fstat(fd)
        fds.append(fd)
    except OSError:
        pass
out['fds'] = fds
out['service_account'] = os.path.exists('/var/run/secrets/kubernetes.io')
shutil.copyfile('/bin/true', '/tmp/true')
os.chmod('/tmp/true', 0o755)
try:
    out['tmp_exec'] = 'ran, exit %d' % subprocess.run(['/tmp/true']).returncode
except OSError as e:
    out['tmp_exec'] = name(e.errno)
print(json.dumps(out))
)PY",
                                 {"--timeout", "10"})
                         .run;
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    const auto& security = effective_container(run).at("securityContext");
    INFO("program: " << json::serialize(found) << "\nsecurityContext: " << json::serialize(security));
    // runAsUser, runAsGroup: the ids the program runs with, and no other group.
    const std::string uid = std::to_string(security.at("runAsUser").as_int64());
    const std::string gid = std::to_string(security.at("runAsGroup").as_int64());
    CHECK(uid == "10000");
    CHECK(found.at("status").at("Uid") == json::value(uid + "\t" + uid + "\t" + uid + "\t" + uid));
    CHECK(found.at("status").at("Gid") == json::value(gid + "\t" + gid + "\t" + gid + "\t" + gid));
    for (const auto& group : found.at("groups").as_array()) CHECK(group == 10000);
    for (const auto& [call, outcome] : found.at("set_ids").as_object()) {
        INFO(call);
        CHECK(outcome == "EPERM");
    }
    // capabilities drop ALL, allowPrivilegeEscalation false, the Localhost seccomp profile.
    CHECK(security.at("capabilities").at("drop") == json::array{"ALL"});
    for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
        INFO(set);
        CHECK(found.at("status").at(set) == "0000000000000000");
    }
    CHECK(security.at("allowPrivilegeEscalation") == false);
    CHECK(found.at("status").at("NoNewPrivs") == "1");
    CHECK(security.at("seccompProfile").at("type") == "Localhost");
    CHECK(found.at("status").at("Seccomp") == "2");
    for (const auto& [call, outcome] : found.at("kernel").as_object()) {
        INFO(call << " -> " << json::serialize(outcome));
        CHECK((outcome == k_eperm || outcome == k_enosys || outcome == "EPERM"));
    }
    // readOnlyRootFilesystem; /proc's knobs refused.
    CHECK(security.at("readOnlyRootFilesystem") == true);
    for (const auto& [dir, outcome] : found.at("writes").as_object()) {
        INFO(dir);
        CHECK(outcome == "EROFS");
    }
    for (const auto& [path, outcome] : found.at("proc").as_object()) {
        INFO(path << " -> " << outcome);
        CHECK(outcome != "opened");
    }
    // The limits the first process sets (no Pod field can), as configured, and none can be raised.
    const auto& configured = run.receipt.at("configured");
    CHECK(found.at("limits").at("RLIMIT_NOFILE") == json::array{configured.at("open_files"), configured.at("open_files")});
    CHECK(found.at("limits").at("RLIMIT_CORE") ==
          json::array{configured.at("core_dump_bytes"), configured.at("core_dump_bytes")});
    CHECK(found.at("raise").at("core") == "refused");
    CHECK(found.at("raise").at("nofile") == "refused");
    CHECK(found.at("fds") == json::array{0, 1, 2});
    // automountServiceAccountToken false: no credentials for the apiserver in the box.
    CHECK(run.receipt.at("observed").at("effective_policy").at("spec").at("automountServiceAccountToken") == false);
    CHECK(found.at("service_account") == false);
    // An emptyDir cannot be noexec: a file written to /tmp runs, and the receipt claims no noexec.
    CHECK(found.at("tmp_exec") == "ran, exit 0");
    CHECK(run.receipt.at("unknown").at("tmpfs_noexec") == true);
}

// docs/hostile.md cases 17 and 18.
TEST_CASE("/tmp in a Pod holds the policy's 16 MiB across files, and the 128th file cannot be opened", "[kube]")
{
    const auto run = run_watched(R"PY(
import errno, json, os
written = 0
chunk = b'x' * (1 << 20)
outcome = 'no error'
try:
    for i in range(25):
        with open('/tmp/fill%d' % i, 'wb', buffering=0) as f:
            for _ in range(4):
                view = memoryview(chunk)
                while view:
                    n = f.write(view)
                    written += n
                    view = view[n:]
except OSError as e:
    outcome = errno.errorcode.get(e.errno, str(e.errno))
for i in range(25):
    try:
        os.unlink('/tmp/fill%d' % i)
    except OSError:
        pass
files = []
try:
    while True:
        files.append(open('/dev/null', 'rb'))
except OSError as e:
    opened = errno.errorcode.get(e.errno, str(e.errno))
print(json.dumps({'tmp': outcome, 'written': written, 'files': opened, 'highest_fd': max(f.fileno() for f in files)}))
)PY",
                                 {"--timeout", "10"})
                         .run;
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    // Files of 4 MiB, each below the file size limit: the tmpfs's own size stops them.
    CHECK(found.at("tmp") == "ENOSPC");
    CHECK(found.at("written") == run.receipt.at("configured").at("tmpfs").at("bytes"));
    CHECK(run.receipt.at("observed").at("effective_policy").at("spec").at("volumes").at(0).at("emptyDir") ==
          json::object{{"medium", "Memory"}, {"sizeLimit", "16Mi"}});
    CHECK(found.at("files") == "EMFILE");
    CHECK(found.at("highest_fd") == 127);
}

// docs/hostile.md case 11.
TEST_CASE("kill(-1, SIGKILL) and signals to PID 1 in a Pod end only the program, and the receipt claims no kill",
          "[kube]")
{
    const auto run = run_watched(std::string(k_find_feeder) + R"PY(
import signal, time
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
feeder = feeders()
os.kill(-1, signal.SIGKILL)
_, status = os.waitpid(child, 0)
print('child killed by', os.WTERMSIG(status) if os.WIFSIGNALED(status) else 'nothing', flush=True)
time.sleep(0.2)
def ended(pid):
    return not os.path.exists('/proc/%d' % pid) or open('/proc/%d/stat' % pid).read().split()[2] == 'Z'
print('feeders', len(feeder), 'ended' if all(ended(p) for p in feeder) else 'alive', flush=True)
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL):
    os.kill(1, s)
time.sleep(0.2)
print('pid 1 outlived its signals', flush=True)
os.kill(os.getpid(), signal.SIGKILL)
)PY")
                         .run;
    CHECK(captured(run.receipt, "stdout") == "child killed by 9\nfeeders 1 ended\npid 1 outlived its signals\n");
    CHECK(run.process.exit_code == 137);
    // 137 from the container status alone: a signal is suggested, none observed, none sent.
    const auto& termination = run.receipt.at("observed").at("termination");
    CHECK(termination_mechanism(run) == "TARGET_EXIT_OBSERVED");
    CHECK(termination.at("exit_code") == 137);
    CHECK(termination.at("signal").is_null());
    CHECK(termination.at("inferred_signal") == 9);
    CHECK(termination.at("deadline_kill_sent") == false);
}

// docs/hostile.md case 20.
TEST_CASE("A program in a Pod that ignores SIGTERM and sleeps is stopped at its deadline", "[kube]")
{
    const auto run = run_watched(R"PY(
import signal, time
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1):
    signal.signal(s, signal.SIG_IGN)
print('sleeping', flush=True)
while True:
    time.sleep(100)
)PY",
                                 {"--timeout", "1"})
                         .run;
    CHECK(captured(run.receipt, "stdout") == "sleeping\n");
    check_stopped_at_deadline(run);
}

// docs/hostile.md cases 11 and 20, on the feeder: a program of the box's uid can kill it.
TEST_CASE("A program that kills its Pod's feeder and sleeps past its deadline ends by the box timer, and the receipt "
          "does not claim the kill",
          "[kube]")
{
    const auto run = run_watched(std::string(k_find_feeder) + R"PY(
import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for pid in feeders():
    os.kill(pid, signal.SIGKILL)
print('feeder killed', flush=True)
while True:
    time.sleep(100)
)PY",
                                 {"--timeout", "1"})
                         .run;
    CHECK(captured(run.receipt, "stdout") == "feeder killed\n");
    // The kill line reached no one: the box timer (the deadline + 1 s) ended the program, and
    // with no record of the kill in the termination message 137 is not PyBox's kill.
    const auto& termination = run.receipt.at("observed").at("termination");
    CHECK(termination.at("deadline_kill_sent") == true);
    CHECK(termination_mechanism(run) == "CAUSE_NOT_ESTABLISHED");
    CHECK(run.receipt.at("unknown").at("exact_termination_cause") == true);
    CHECK(run.process.exit_code == 137);
    CHECK(termination.at("exit_code") == 137);
    CHECK(termination.at("signal_source").is_null());
    CHECK(run.receipt.at("lifecycle").at("timing").at("total_s").to_number<double>() < 10.0);
    CHECK(run.receipt.at("cleanup").at("removed") == true);
}

// docs/hostile.md case 54, and the kill's nonce (docs/kubernetes.md "The run").
TEST_CASE("A program in a Pod cannot read its feeder's or PID 1's memory or stdin, sees its own stdin end, and never "
          "sees the kill's nonce",
          "[kube]")
{
    const auto run = run_watched(std::string(k_find_feeder) + R"PY(
import ctypes, errno, json, sys
def attempt(call):
    try:
        call()
        return 'succeeded'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
out = {'feeders': len(feeders()), 'stdin': sys.stdin.buffer.read().decode('latin-1')}
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
for label, pid in (('feeder', feeders()[0]), ('pid1', 1)):
    for what in ('mem', 'environ', 'maps', 'fd/0'):
        out[label + ' ' + what] = attempt(lambda: open('/proc/%d/%s' % (pid, what), 'rb').read(1))
    out[label + ' fd'] = attempt(lambda: os.listdir('/proc/%d/fd' % pid))
    ctypes.set_errno(0)
    out[label + ' ptrace'] = 'succeeded' if libc.ptrace(0x4206, pid, None, None) != -1 else errno.errorcode[ctypes.get_errno()]
print(json.dumps(out), flush=True)
while True:
    data = os.read(0, 4096)
    if data:
        print('stdin gave', data, flush=True)
)PY",
                                 {"--timeout", "1"})
                         .run;
    const auto out = captured(run.receipt, "stdout");
    // One line: the findings; stdin never gave anything after its end, the kill line included.
    REQUIRE(out.find('\n') == out.size() - 1);
    const auto found = program_json(run);
    CHECK(found.at("feeders") == 1);
    CHECK(found.at("stdin") == "");
    for (const auto& [what, outcome] : found.as_object()) {
        if (what == "feeders" || what == "stdin") continue;
        INFO(what << " -> " << outcome);
        CHECK((outcome == "EACCES" || outcome == "EPERM"));
    }
    check_stopped_at_deadline(run);
}

// docs/hostile.md cases 21 and 23: the bytes through the attach websocket's channels.
TEST_CASE("Invalid UTF-8, NUL and escape bytes come from a Pod exactly, stdout apart from a stderr flood", "[kube]")
{
    constexpr char k_bytes[] = "\xff\xfe\x00\x1b[31mred\x1b[0m\xc3\x28 \xed\xa0\x80 \xf0\x9f\x98";
    const std::string bytes(k_bytes, sizeof k_bytes - 1);
    const auto run = run_watched(put_all_prelude() + R"PY(
for _ in range(40):
    put(2, b'e' * 50000)
    put(1, b'\xff\xfe\x00\x1b[31mred\x1b[0m\xc3\x28 \xed\xa0\x80 \xf0\x9f\x98')
)PY",
                                 {"--timeout", "10"})
                         .run;
    REQUIRE(run.process.exit_code == 0);
    const auto& capture = run.receipt.at("capture");
    std::string expected;
    for (int i = 0; i < 40; ++i) expected += bytes;
    CHECK(capture.at("stdout_encoding") == "base64");
    CHECK(captured(run.receipt, "stdout") == expected);
    CHECK(capture.at("stdout_bytes") == expected.size());
    CHECK(captured(run.receipt, "stderr") == std::string(65536, 'e'));
    CHECK(capture.at("stderr_bytes") == 2'000'000);
    CHECK(capture.at("stderr_truncated") == true);
    CHECK(capture.at("stream_error").is_null());
}

// docs/hostile.md case 24.
TEST_CASE("A program in a Pod that closes stdout and stderr and then loops is stopped at its deadline", "[kube]")
{
    const auto run =
        run_watched("import os\nprint('closing', flush=True)\nos.close(1)\nos.close(2)\nwhile True:\n    pass\n",
                    {"--timeout", "1"})
            .run;
    CHECK(captured(run.receipt, "stdout") == "closing\n");
    check_stopped_at_deadline(run);
}

// docs/hostile.md cases 12 and 44: exit codes that look like a signal or a deadline.
TEST_CASE("sys.exit(137), sys.exit(124) and a segfault in a Pod are the program's own ends, no kill or deadline "
          "claimed",
          "[kube]")
{
    struct Case {
        const char* program;
        int exit_code;
        int inferred_signal;  // 0: none
    };
    for (const auto& [program, exit_code, inferred_signal] :
         {Case{"import sys\nsys.exit(137)\n", 137, 9}, Case{"import sys\nsys.exit(124)\n", 124, 0},
          Case{"import ctypes\nctypes.string_at(0)\n", 139, 11}}) {
        INFO(program);
        const auto run = run_watched(program).run;
        const auto& termination = run.receipt.at("observed").at("termination");
        CHECK(run.process.exit_code == exit_code);
        CHECK(termination_mechanism(run) == "TARGET_EXIT_OBSERVED");
        CHECK(termination.at("exit_code") == exit_code);
        CHECK(termination.at("signal").is_null());
        CHECK(termination.at("signal_source").is_null());
        if (inferred_signal == 0) {
            CHECK(termination.at("inferred_signal").is_null());
        } else {
            CHECK(termination.at("inferred_signal") == inferred_signal);
        }
        CHECK(termination.at("deadline_kill_sent") == false);
    }
}

// docs/hostile.md case 5, on a cluster: the receipt claims no enforcement it did not observe.
TEST_CASE("A program in a Pod that reaches for the apiserver and its node finds no credentials, and the receipt "
          "does not claim the network was enforced",
          "[kube]")
{
    const auto run = run_watched(R"PY(
import errno, json, os, socket, ssl, urllib.request
def gateway():
    for line in open('/proc/net/route').read().splitlines()[1:]:
        fields = line.split()
        if fields[1] == '00000000':
            return socket.inet_ntoa(int(fields[2], 16).to_bytes(4, 'little'))
tls = ssl.create_default_context()
tls.check_hostname = False
tls.verify_mode = ssl.CERT_NONE
def get(url):
    try:
        return urllib.request.urlopen(url, context=tls, timeout=1).status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError as e:
        reason = getattr(e, 'reason', e)
        return errno.errorcode.get(getattr(reason, 'errno', None), type(reason).__name__)
service = '%s:%s' % (os.environ.get('KUBERNETES_SERVICE_HOST'), os.environ.get('KUBERNETES_SERVICE_PORT'))
print(json.dumps({'service': service,
                  'apiserver': get('https://%s/api/v1/namespaces/pybox-test/pods' % service),
                  'kubelet': get('https://%s:10250/pods' % gateway()),
                  'token': os.path.exists('/var/run/secrets/kubernetes.io/serviceaccount')}))
)PY",
                                 {"--timeout", "10"})
                         .run;
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    // The test cluster's network enforces no NetworkPolicy: what the program reaches refuses it
    // for want of credentials (401, 403), or cannot be reached.
    CHECK(found.at("token") == false);
    for (const char* target : {"apiserver", "kubelet"}) {
        INFO(target << " -> " << json::serialize(found.at(target)));
        CHECK((found.at(target) == 401 || found.at(target) == 403 || found.at(target).is_string()));
    }
    CHECK(run.receipt.at("unknown").at("network_enforcement") == true);
    CHECK(run.receipt.at("observed").at("effective_policy").at("network_policy").at("deny_all") == true);
    const auto shown = cluster_daemon().pybox(
        {"receipts", "show", std::string(run.receipt.at("identity").at("run_id").as_string())});
    CHECK_THAT(shown.output, Catch::Contains("denied by policy (the enforcement not observed)"));
}

// docs/hostile.md case 25.
TEST_CASE("A child that daemonizes in a Pod does not outlive the run", "[kube]")
{
    const std::string marker = "pybox-kube-daemon-" + random_id_128();
    const auto run = run_watched(daemonizing_child_program(marker))
                         .run;
    CHECK(run.process.exit_code == 0);
    CHECK(captured(run.receipt, "stdout") == "daemon running\n");
    // The node's processes are this host's (the test cluster runs here): the box's PID 1 ended
    // with the program, and with it every process of its PID namespace.
    CHECK(within(std::chrono::seconds(5), [&] { return processes_with_argument(marker) == 0; }));
}

// docs/hostile.md cases 6, 42, 55 and 56, in one Pod: what of its node a program can reach and
// read, against the Pod settings and the unknowns of the receipt.
TEST_CASE("A program in a Pod reaches no unix socket of its node, finds no user in its mounts, cannot run a file "
          "without a path, and reads host counters the receipt does not claim masked",
          "[kube]")
{
    auto& daemon = cluster_daemon();
    const std::string abstract_name = "pybox-kube-hostile-" + random_id_128();
    const NodeAbstractListener listener(abstract_name);
    // Every socket file of the node (its kubelet's, its container runtime's), the daemon's and
    // the suite's engine's, and the usual places of a runtime's socket.
    std::vector<std::string> sockets{(daemon.home() / "pyboxd.sock").string(),
                                     (runtime_home() / "engine" / "docker.sock").string(),
                                     "/var/run/docker.sock",
                                     "/run/docker.sock",
                                     "/run/containerd/containerd.sock",
                                     "/var/run/dockershim.sock"};
    for (const auto& socket : node_unix_sockets())
        if (socket.starts_with("/")) sockets.push_back(socket);
    const auto run = run_watched(probes_in_one_run({{"sockets", unix_socket_probe_program(sockets, abstract_name)},
                                                    {"mounts", mount_probe_program()},
                                                    {"memfd", memfd_exec_program()},
                                                    {"counters", host_counters_program()}}),
                                 {"--timeout", "10"})
                         .run;
    INFO("stderr: " << captured(run.receipt, "stderr"));
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    const auto& spec = run.receipt.at("observed").at("effective_policy").at("spec").as_object();
    INFO("program: " << json::serialize(found));

    // Case 6: no host namespace and no volume but the emptyDir, so no socket of the node is in
    // the Pod's file system, and its network namespace is its own.
    for (const char* shared : {"hostNetwork", "hostPID", "hostIPC"}) CHECK_FALSE(spec.contains(shared));
    for (const auto& volume : spec.at("volumes").as_array()) CHECK_FALSE(volume.as_object().contains("hostPath"));
    const auto& reached = found.at("sockets").as_object();
    CHECK(reached.size() == std::set<std::string>(sockets.begin(), sockets.end()).size() + 1);
    for (const auto& [address, outcome] : reached) {
        INFO(address << " -> " << outcome);
        CHECK(outcome != "connected");
    }
    CHECK(reached.at("abstract") == "ECONNREFUSED");

    // Case 42: nothing the Pod can read names the user, their home, a runtime folder or the
    // installation (the node's own paths, here under the cluster's home, are the node's).
    const auto user = run_process({"/usr/bin/id", "-un"});
    REQUIRE(user.has_value());
    std::vector<std::string> forbidden{runtime_home().string(), daemon.home().string(), ".pybox",
                                       user->output.substr(0, user->output.find('\n')),
                                       std::string(run.receipt.at("identity").at("installation_id").as_string())};
    if (const char* home = std::getenv("HOME"); home != nullptr && std::string_view(home).size() > 1)
        forbidden.emplace_back(home);
    for (const auto& naming : texts_naming(found.at("mounts"), forbidden)) FAIL_CHECK("the program read: " << naming);

    // Case 55: the Localhost profile refuses memfd_create; the emptyDir /tmp is not noexec, so a
    // file written there runs by its descriptor as by its path (case 8), which the receipt
    // leaves unknown.
    CHECK(effective_container(run).at("securityContext").at("seccompProfile").at("type") == "Localhost");
    const auto& memfd = found.at("memfd");
    CHECK(memfd.at("memfd_create") == k_eperm);
    CHECK(memfd.at("memfd_create_raw") == k_eperm);
    CHECK(memfd.at("memfd_exec") == "no memfd");
    CHECK(memfd.at("exec_proc_self_fd") == 0);
    CHECK(memfd.at("execveat_written") == 0);
    CHECK(run.receipt.at("unknown").at("tmpfs_noexec") == true);
    CHECK(memfd.at("execveat_bin_true") == 0);
    CHECK(memfd.at("callback_sorted") == json::array{1, 2, 3, 4, 5});

    // Case 56: a Pod cannot name paths to mask, and its runtime's defaults leave the host's
    // counters readable: the receipt claims no masking.
    CHECK_FALSE(effective_container(run).at("securityContext").as_object().contains("procMount"));
    CHECK(run.receipt.at("unknown").at("masked_paths") == true);
    const auto& counters = found.at("counters");
    for (const char* path : {"/proc/stat", "/proc/loadavg", "/proc/meminfo", "/proc/sys/kernel/random/boot_id"}) {
        INFO(path);
        CHECK_FALSE(counters.at("files").at(path).as_string().empty());
    }
    CHECK(counters.at("cpu_count").to_number<int>() >= 1);
}

// docs/hostile.md case 9.
TEST_CASE("Markers a program leaves in its Pod's /tmp and /dev/shm are not in the next run's Pod", "[kube]")
{
    const std::string marker = "pybox-kube-marker-" + random_id_128();
    const auto first = run_watched(marker_writing_program(marker)).run;
    REQUIRE(first.process.exit_code == 0);
    CHECK(program_json(first).at("/tmp") == "written");
    CHECK(program_json(first).at("/dev/shm") == "written");
    const auto second = run_watched(marker_listing_program()).run;
    REQUIRE(second.process.exit_code == 0);
    CHECK(second.receipt.at("container_id") != first.receipt.at("container_id"));
    const auto found = program_json(second);
    CHECK(found.as_object().size() == 2);
    for (const auto& [dir, entries] : found.as_object()) {
        INFO(dir << ": " << entries);
        CHECK(entries.as_array().empty());
    }
}

// docs/hostile.md case 14.
TEST_CASE("A thread bomb in a Pod stops at the node's pids limit the receipt names, every task of the Pod counted",
          "[kube]")
{
    const auto run = run_watched(thread_bomb_program(), {"--timeout", "10"}).run;
    REQUIRE(run.process.exit_code == 0);
    const auto found = program_json(run);
    INFO("program: " << json::serialize(found));
    CHECK(found.at("error") == "can't start new thread");
    CHECK(found.at("threads").as_int64() > 0);
    // The tasks of the box's PID namespace (PID 1, the feeder, the interpreter and its threads),
    // and the Pod's sandbox process (outside that namespace, in the Pod's cgroup): the limit.
    const auto& limit = run.receipt.at("observed").at("effective_policy").at("node_pids_limit");
    CHECK(limit.at("read") == true);
    CHECK(found.at("tasks").as_int64() + 1 == limit.at("pod_pids_limit").as_int64());
}

// docs/hostile.md case 16.
TEST_CASE("Children in a Pod that each allocate 50 MiB are capped by the Pod's memory limit, not per process",
          "[kube]")
{
    const auto run = run_watched(memory_children_program(), {"--timeout", "5"}).run;
    const auto& limits = effective_container(run).at("resources").at("limits");
    const auto memory_bytes = run.receipt.at("configured").at("memory_bytes").as_int64();
    CHECK(limits.at("memory") == json::value(std::to_string(memory_bytes >> 20) + "Mi"));
    // One child's 50 MiB fits the limit, three do not.
    REQUIRE(memory_bytes > (50 << 20));
    REQUIRE(memory_bytes < 3 * (50 << 20));
    const auto out = captured(run.receipt, "stdout");
    INFO("stdout: " << out << "\nmechanism: " << termination_mechanism(run));
    if (out.empty()) {
        // The parent itself was chosen by the OOM killer: the Pod's limit was still enforced.
        CHECK(termination_mechanism(run) == "OUT_OF_MEMORY");
    } else {
        CHECK(out != "3 held 0 killed\n");
        CHECK(out.find(" 0 killed") == std::string::npos);
        CHECK(out.rfind("0 held", 0) != 0);
    }
}

// docs/hostile.md case 19.
TEST_CASE("A busy loop in a Pod gets at most the Pod's cpu limit", "[kube]")
{
    const auto run = run_watched(cpu_share_program(), {"--timeout", "5"}).run;
    REQUIRE(run.process.exit_code == 0);
    const auto& configured = run.receipt.at("configured");
    const auto millicores = configured.at("nano_cpus").as_int64() / 1'000'000;
    CHECK(effective_container(run).at("resources").at("limits").at("cpu") == json::value(std::to_string(millicores) + "m"));
    const double share = std::stod(captured(run.receipt, "stdout"));
    INFO("CPU share: " << share);
    CHECK(share > 0.05);
    // The limit, plus at most one CFS period of slack.
    CHECK(share <= configured.at("cpu_cores").to_number<double>() + 0.1);
}

// docs/hostile.md case 22.
TEST_CASE("A 10 MiB line with no newline from a Pod, interleaved with stderr, is capped per stream and counted "
          "exactly",
          "[kube]")
{
    const auto run = run_watched(long_line_program(), {"--timeout", "10"}).run;
    REQUIRE(run.process.exit_code == 0);
    const auto& capture = run.receipt.at("capture");
    const auto kept = static_cast<std::size_t>(run.receipt.at("configured").at("output_limit_bytes").as_int64());
    CHECK(captured(run.receipt, "stdout") == std::string(kept, 'a'));
    CHECK(captured(run.receipt, "stderr") == std::string(kept, 'b'));
    CHECK(capture.at("stdout_bytes") == k_long_line_stdout_bytes);
    CHECK(capture.at("stderr_bytes") == k_long_line_stderr_bytes);
    CHECK(capture.at("stdout_bytes_dropped") == k_long_line_stdout_bytes - kept);
    CHECK(capture.at("stderr_bytes_dropped") == k_long_line_stderr_bytes - kept);
    CHECK(capture.at("stdout_truncated") == true);
    CHECK(capture.at("stream_error").is_null());
}
