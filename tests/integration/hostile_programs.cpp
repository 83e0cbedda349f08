#include "tests/integration/hostile_programs.hpp"

#include "util/text.hpp"

#include <cctype>
#include <string_view>

namespace pybox::test {

namespace json = boost::json;

namespace {

bool is_word_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
}

bool contains_whole(std::string_view text, std::string_view needle)
{
    for (auto at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) {
        const auto end = at + needle.size();
        const bool starts = at == 0 || !is_word_char(needle.front()) || !is_word_char(text[at - 1]);
        const bool ends = end == text.size() || !is_word_char(needle.back()) || !is_word_char(text[end]);
        if (starts && ends) return true;
    }
    return false;
}

// Every string in a JSON document (keys too), depth first.
void collect_strings(const json::value& value, std::vector<std::string>& out)
{
    if (const auto* text = value.if_string()) out.emplace_back(*text);
    if (const auto* array = value.if_array())
        for (const auto& item : *array) collect_strings(item, out);
    if (const auto* object = value.if_object())
        for (const auto& [key, item] : *object) {
            out.emplace_back(key);
            collect_strings(item, out);
        }
}

}  // namespace

std::string put_all_prelude()
{
    return R"PY(
import os
def put(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
)PY";
}

std::string unix_socket_probe_program(const std::vector<std::string>& paths, const std::string& abstract_name)
{
    std::string listed;
    for (const auto& path : paths) listed += "bytes.fromhex('" + util::hex_encode(path) + "').decode(), ";
    return R"PY(
import errno, json, socket
def reach(address):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(0.5)
    try:
        s.connect(address)
        return 'connected'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    finally:
        s.close()
out = {p: reach(p) for p in [)PY" +
           listed + R"PY(]}
out['abstract'] = reach('\0)PY" + abstract_name + R"PY(')
print(json.dumps(out))
)PY";
}

std::string marker_writing_program(const std::string& marker)
{
    return R"PY(
import json
out = {}
for d in ('/tmp', '/dev/shm'):
    try:
        with open(d + '/)PY" + marker + R"PY(', 'w') as f:
            f.write('left behind')
        out[d] = 'written'
    except OSError as e:
        out[d] = e.errno
print(json.dumps(out))
)PY";
}

std::string marker_listing_program()
{
    return R"PY(
import json, os
print(json.dumps({d: sorted(os.listdir(d)) for d in ('/tmp', '/dev/shm') if os.path.isdir(d)}))
)PY";
}

std::string thread_bomb_program()
{
    return R"PY(
import json, os, threading, time
threads = 0
try:
    while True:
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        threads += 1
except RuntimeError as e:
    error = str(e)
tasks = sum(len(os.listdir('/proc/%s/task' % p)) for p in os.listdir('/proc') if p.isdigit())
print(json.dumps({'threads': threads, 'error': error, 'tasks': tasks}), flush=True)
os._exit(0)
)PY";
}

std::string memory_children_program()
{
    return R"PY(
import os, time
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        block = bytearray(50 << 20)
        time.sleep(1.5)
        os._exit(0)
    children.append(pid)
held = killed = 0
for pid in children:
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        held += 1
    elif os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9:
        killed += 1
print(held, 'held', killed, 'killed')
)PY";
}

std::string cpu_share_program()
{
    return R"PY(
import time
wall, cpu = time.monotonic(), time.process_time()
while time.monotonic() - wall < 1.5:
    pass
print(round((time.process_time() - cpu) / (time.monotonic() - wall), 3))
)PY";
}

std::string long_line_program()
{
    return put_all_prelude() + R"PY(
piece = b'a' * (1 << 20)
for _ in range(10):
    put(1, piece)
    put(2, b'b' * 100_000)
)PY";
}

std::string mount_probe_program()
{
    return R"PY(
import json, os
def read(path):
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except OSError as e:
        return 'error %d' % e.errno
paths = ['/proc/self/mountinfo', '/proc/self/mounts', '/proc/self/cgroup', '/proc/1/mountinfo', '/proc/1/cgroup',
         '/proc/1/cmdline', '/proc/self/environ', '/proc/1/environ', '/etc/hostname', '/etc/hosts', '/etc/resolv.conf',
         '/proc/self/cpuset']
out = {p: read(p) for p in paths}
out['uname'] = ' '.join(os.uname())
print(json.dumps(out))
)PY";
}

std::vector<std::string> texts_naming(const json::value& found, const std::vector<std::string>& forbidden)
{
    std::vector<std::string> seen;
    collect_strings(found, seen);
    std::vector<std::string> naming;
    for (const auto& text : seen)
        for (const auto& needle : forbidden)
            if (contains_whole(text, needle)) naming.push_back(text + " names " + needle);
    return naming;
}

std::string memfd_exec_program()
{
    return R"PY(
import ctypes, json, os, platform, shutil
libc = ctypes.CDLL(None, use_errno=True)
def exec_in_child(call):
    child = os.fork()
    if child == 0:
        try:
            call()
        except OSError as e:
            os._exit(100 + e.errno)
        os._exit(99)
    return os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
out = {}
try:
    memfd = os.memfd_create('elf')
    out['memfd_create'] = 'succeeded'
except OSError as e:
    memfd = None
    out['memfd_create'] = e.errno
ctypes.set_errno(0)
raw = libc.syscall(ctypes.c_long({'x86_64': 319, 'aarch64': 279}[platform.machine()]), b'elf', ctypes.c_uint(0))
out['memfd_create_raw'] = 'succeeded' if raw >= 0 else ctypes.get_errno()
if memfd is None:
    out['memfd_exec'] = 'no memfd'
else:
    os.write(memfd, open('/bin/true', 'rb').read())
    out['memfd_exec'] = exec_in_child(lambda: os.execve(memfd, ['true'], {}))
shutil.copy('/bin/true', '/tmp/true')
os.chmod('/tmp/true', 0o755)
written = os.open('/tmp/true', os.O_RDONLY)
out['exec_proc_self_fd'] = exec_in_child(lambda: os.execv('/proc/self/fd/%d' % written, ['true']))
out['execveat_written'] = exec_in_child(lambda: os.execve(written, ['true'], {}))
system = os.open('/bin/true', os.O_RDONLY)
out['execveat_bin_true'] = exec_in_child(lambda: os.execve(system, ['true'], {}))
compare = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
numbers = (ctypes.c_int * 5)(5, 1, 4, 2, 3)
libc.qsort(numbers, 5, ctypes.sizeof(ctypes.c_int), compare(lambda a, b: a[0] - b[0]))
out['callback_sorted'] = list(numbers)
print(json.dumps(out))
)PY";
}

std::string host_counters_program()
{
    return R"PY(
import json, os
def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        return 'error %d' % e.errno
paths = ['/proc/stat', '/proc/loadavg', '/proc/meminfo', '/proc/vmstat', '/proc/diskstats', '/proc/interrupts',
         '/proc/softirqs', '/proc/schedstat', '/proc/locks', '/proc/cmdline', '/proc/sys/kernel/random/boot_id',
         '/proc/sys/fs/file-nr']
out = {'files': {p: read(p) for p in paths}}
try:
    out['pressure'] = os.listdir('/proc/pressure')
except OSError as e:
    out['pressure'] = 'error %d' % e.errno
out['cpu_count'] = os.cpu_count()
out['affinity'] = len(os.sched_getaffinity(0))
print(json.dumps(out))
)PY";
}

std::string probes_in_one_run(const std::vector<std::pair<std::string, std::string>>& named_programs)
{
    std::string listed;
    for (const auto& [name, program] : named_programs)
        listed += "    ('" + name + "', bytes.fromhex('" + util::hex_encode(program) + "').decode()),\n";
    return "import contextlib, io, json\n"
           "found = {}\n"
           "for name, program in [\n" +
           listed +
           "]:\n"
           "    output = io.StringIO()\n"
           "    with contextlib.redirect_stdout(output):\n"
           "        exec(compile(program, name, 'exec'), {'__name__': name})\n"
           "    found[name] = json.loads(output.getvalue())\n"
           "print(json.dumps(found))\n";
}

}  // namespace pybox::test
