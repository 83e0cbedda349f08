# PyBox's files helper: the first program of a box that moves files, run as
# `python3 -I -B -u -c <this text>` under the box timer (proto::box_command); its SHA-256 is in the receipt's
# configured.files_helper_sha256. Fixed in the daemon; docs/how-it-works.md "Runs that move files".
#
# stdin (from the daemon, read whole before anything else runs): one JSON object
#   {"marker": M, "source": PROGRAM, "inputs": [{"name": N, "base64": B}, ...]}
# It places the inputs under /tmp/work, runs the program there as its child (`python3 -I -B -u -`,
# the program on the child's stdin, stdout and stderr shared with the box), and once the program
# has ended kills and reaps every process it left. Then it writes M and one JSON report on stdout:
#   {"inputs": [{"name","bytes","sha256"}], "outputs": [{"name","bytes","sha256","base64"}],
#    "skipped": [{"name","reason"}], "skipped_unlisted": N, "errors": [TEXT]}
# M is random per run and known only to the daemon and to this process, which the program cannot
# read (not dumpable): nothing the program prints can pass for the report. Exits with the
# program's exit code (128 + N for a signal N), 125 when it could not run the program.
import base64, ctypes, hashlib, json, os, signal, stat, subprocess, sys

WORK, OUT = b'/tmp/work', b'/tmp/work/out'
MAX_FILES, MAX_BYTES, MAX_NAME, MAX_DEPTH, MAX_LISTED, MAX_SEEN = 64, 8 << 20, 255, 16, 64, 4096


def name_problem(name):
    if not name or len(name) > MAX_NAME or name.startswith(b'/'):
        return True
    if any(c < 0x20 or c == 0x7f for c in name):
        return True
    try:
        name.decode('utf-8')
    except UnicodeDecodeError:
        return True
    return any(part in (b'', b'.', b'..') for part in name.split(b'/'))


def shown(name):
    return name.decode('utf-8', 'backslashreplace')[:MAX_NAME]


def place_inputs(inputs, report):
    for item in inputs:
        name = item['name'].encode()
        data = base64.b64decode(item['base64'], validate=True)
        path = os.path.join(WORK, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
        report['inputs'].append({'name': item['name'], 'bytes': len(data), 'sha256': hashlib.sha256(data).hexdigest()})


def run_program(source):
    def least_precious():  # under memory pressure the kernel kills the program before the helper
        try:
            with open('/proc/self/oom_score_adj', 'w') as f:
                f.write('1000')
        except OSError:
            pass
    child = subprocess.Popen([sys.executable, '-I', '-B', '-u', '-'], stdin=subprocess.PIPE, cwd=WORK,
                             preexec_fn=least_precious)
    try:
        child.stdin.write(source.encode())
        child.stdin.close()
    except BrokenPipeError:
        pass
    status = child.wait()
    # Every process the program left: killed, and reaped here (this process is their subreaper).
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    return status if status >= 0 else 128 - status


def skip(report, name, reason):
    if len(report['skipped']) < MAX_LISTED:
        report['skipped'].append({'name': shown(name), 'reason': reason})
    else:
        report['skipped_unlisted'] += 1


def pack_outputs(report):
    try:
        if not stat.S_ISDIR(os.lstat(OUT).st_mode):
            report['errors'].append('The output folder was replaced by something that is not a folder.')
            return
    except FileNotFoundError:
        report['errors'].append('The program removed the output folder.')
        return
    budget, seen = [MAX_BYTES], [0]

    def walk(folder, prefix, depth):
        found = []
        try:
            entries = os.scandir(folder)
        except OSError:
            return skip(report, prefix[:-1], 'unreadable')
        with entries:
            for entry in entries:  # past MAX_SEEN entries in all, only counted
                if seen[0] < MAX_SEEN:
                    found.append(entry)
                    seen[0] += 1
                else:
                    report['skipped_unlisted'] += 1
        for entry in sorted(found, key=lambda e: e.name):
            name = prefix + entry.name
            if entry.is_symlink():
                skip(report, name, 'symlink')
            elif entry.is_dir(follow_symlinks=False):
                if depth >= MAX_DEPTH:
                    skip(report, name, 'too_deep')
                else:
                    walk(entry.path, name + b'/', depth + 1)
            elif not entry.is_file(follow_symlinks=False):
                skip(report, name, 'not_regular_file')
            elif name_problem(name):
                skip(report, name, 'name_not_allowed')
            else:
                pack_file(entry.path, name)

    def pack_file(path, name):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return skip(report, name, 'unreadable')
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return skip(report, name, 'not_regular_file')
            if info.st_nlink > 1:
                return skip(report, name, 'hard_link')
            if len(report['outputs']) >= MAX_FILES:
                return skip(report, name, 'too_many_files')
            if info.st_size > budget[0]:
                return skip(report, name, 'over_total_bytes')
            data = b''
            while len(data) <= info.st_size:
                chunk = os.read(fd, info.st_size + 1 - len(data))
                if not chunk:
                    break
                data += chunk
            if len(data) != info.st_size:
                return skip(report, name, 'changed_while_read')
        finally:
            os.close(fd)
        budget[0] -= len(data)
        report['outputs'].append({'name': name.decode(), 'bytes': len(data),
                                  'sha256': hashlib.sha256(data).hexdigest(),
                                  'base64': base64.b64encode(data).decode()})

    walk(OUT, b'', 0)


def main():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE 0: no other process of this user reads this one
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: the program's orphans come back here
    request = json.loads(sys.stdin.buffer.read())
    null = os.open('/dev/null', os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    marker = request['marker'].encode()
    report = {'inputs': [], 'outputs': [], 'skipped': [], 'skipped_unlisted': 0, 'errors': []}
    status = 125
    os.umask(0o022)
    try:
        os.makedirs(OUT)
        place_inputs(request.pop('inputs'), report)
    except (OSError, ValueError) as error:
        report['errors'].append('The inputs could not be placed in the box: %s.' % error)
    if not report['errors']:
        status = run_program(request.pop('source'))
        try:
            pack_outputs(report)
        except OSError as error:
            report['errors'].append('The outputs could not be read: %s.' % error)
    text = marker + json.dumps(report, separators=(',', ':')).encode()
    while text:
        text = text[os.write(1, text):]
    return status


sys.exit(main())
