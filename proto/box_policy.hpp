// BoxPolicy: the fixed settings of a box, chosen by the daemon from the image name alone.
// A request can pick the image, the deadline and the output cap; nothing else it sends can
// change these values (docs/reference.md, "The box").
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::proto {

struct BoxPolicy {
    std::int64_t memory_bytes = 0;       // Memory and MemorySwap (no swap)
    std::int64_t pids = 0;
    std::int64_t cpu_millis = 0;         // 1000 = one core: a rate, not a pin
    std::string user = "10000:10000";
    bool readonly_root = true;
    std::string tmpfs_path = "/tmp";
    std::int64_t tmpfs_bytes = 16 * 1024 * 1024;
    // The tmpfs's mount flags: no program runs from it, no device files, no set-user-ID bits.
    bool tmpfs_noexec = true;
    bool tmpfs_nodev = true;
    bool tmpfs_nosuid = true;
    std::string network = "none";
    std::int64_t open_files = 128;
    std::int64_t core_dump_bytes = 0;    // the `core` ulimit, soft and hard: no core dumps
    bool no_new_privileges = true;
    std::string capabilities_dropped = "ALL";
    // Paths the engine hides (an empty file, or an empty read-only folder, in their place):
    // Docker's defaults, and the host-wide counters and identity a program could watch the host
    // through (its CPU times, context switches and forks, load, memory, disks, interrupts,
    // pressure, file and inode counts, the boot id). docs/reference.md lists what stays visible.
    std::vector<std::string> masked_paths = {
        "/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
        "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
        "/proc/stat", "/proc/loadavg", "/proc/meminfo", "/proc/vmstat", "/proc/zoneinfo", "/proc/buddyinfo",
        "/proc/diskstats", "/proc/partitions", "/proc/swaps", "/proc/interrupts", "/proc/softirqs",
        "/proc/schedstat", "/proc/pressure", "/proc/locks", "/proc/key-users", "/proc/cmdline",
        "/proc/sys/kernel/random/boot_id", "/proc/sys/kernel/random/entropy_avail", "/proc/sys/fs/file-nr",
        "/proc/sys/fs/inode-nr", "/proc/sys/fs/dentry-state"};
    // Paths the engine mounts read-only: Docker's defaults, stated so that an engine cannot
    // leave one out.
    std::vector<std::string> readonly_paths = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                                               "/proc/sysrq-trigger"};
    std::string seccomp;                 // the profile's name (seccomp_profile.hpp)
    std::string seccomp_sha256;          // hex SHA-256 of the profile's JSON text

    double cpu_cores() const { return static_cast<double>(cpu_millis) / 1000.0; }

    friend bool operator==(const BoxPolicy&, const BoxPolicy&) = default;
};

// The tmpfs's set flags in mount(8)'s notation, comma-separated in the order noexec, nodev,
// nosuid: "noexec,nodev,nosuid" for every policy PyBox makes.
std::string tmpfs_flags(const BoxPolicy& policy);

// The policy for an image name, with PyBox's seccomp profile: the built-in "stdlib" and "data"
// have their own; every valid own-image name (is_own_image_name) gets stdlib's, whatever the
// image holds; nullopt for anything else. Whether an own image exists is the daemon's pre-run
// check (image_not_built), not this function's.
std::optional<BoxPolicy> policy_for_image(const std::string& image);
// Names of the built-in images (recipes shipped in images/).
std::vector<std::string> known_images();

// Own images (`pybox image build NAME`): [a-z][a-z0-9-]{0,31}, and not a built-in name.
inline constexpr std::size_t k_max_own_image_name_bytes = 32;
bool is_own_image_name(std::string_view name);
// Why `name` cannot name an own image ("" when it can): one sentence for an error message.
std::string own_image_name_problem(std::string_view name);

// The first process of every cold box, the box timer: `perl -e <script> <deadline + 1> python3
// -I -B -u -`. A small fixed Perl program as PID 1 that makes itself undumpable (so that the
// program, of the same uid, can neither read nor write its memory: /proc/1/mem, process_vm_*),
// then runs the rest of its arguments as its child with the box's stdin, and waits for it at
// most the timer's seconds: it exits with the child's exit status (128 + N for a signal N), or
// kills it and exits 137 when the timer passes, which ends every process of the box; the exit
// codes GNU `timeout -s KILL` gives as PID 1, which it replaces. It sets no signal handler, so
// nothing in the box can signal it. Where it cannot make itself undumpable it exits 1 and runs
// nothing.
std::vector<std::string> box_command(double timeout_s);
// The first process of a warm box, started before its program exists: a small fixed Perl
// program, PID 1 of the box, that starts the interpreter ahead exactly as a cold box runs it
// (`python3 -I -B -u -`, its child, stdin a pipe, fds 0-2 only, default signal
// dispositions, the box's environment), blocked reading its program. At delivery it reads one
// line (the box timer's value) and only then passes the rest of stdin, the program, to the
// interpreter, and waits for it at most that long: the timer starts at delivery and lives in
// PID 1, which sets no signal handler, so nothing in the box can signal it; it exits with the
// interpreter's exit status (128 + N for a signal N, as a cold box's PID 1 does), or kills it
// and exits 137 when the timer passes, which ends every process of the box. It reads the line a
// byte at a time, so the program is exactly what follows it. Without a line (stdin closed
// first) it exits 1 and no program runs. It makes itself undumpable first, as a cold box's.
std::vector<std::string> warm_box_command();
// The line the daemon writes first at delivery: the box timer (deadline + 1 s) and a newline.
std::string warm_box_timer_line(double guest_timer_s);

// The first word of a fed box's environment report (fed_box_command()).
inline constexpr std::string_view k_fed_environment_marker = "pybox-environment";
// The byte that starts the daemon's kill on a fed box's stdin (fed_kill_line()).
inline constexpr char k_fed_kill_byte = 'K';
// Where a Pod's container writes its last message, which the kubelet reports in the container's
// status (state.terminated.message, at most 4096 bytes); make_pod sets it.
inline constexpr std::string_view k_fed_termination_log = "/dev/termination-log";

// The first process of a box on Kubernetes, `sh -c <limits> <feeder> inner...`, for a cluster
// whose attach websocket cannot close the box's stdin (v4.channel.k8s.io, Kubernetes 1.20-1.29)
// and whose engine cannot set ulimits. `inner` is a box's own first process (box_command's).
// - sh sets RLIMIT_NOFILE to BoxPolicy's open_files (128), RLIMIT_CORE to its core_dump_bytes
//   (0) and RLIMIT_FSIZE to `file_bytes` (the policy's tmpfs size, rounded up to dash's 512-byte
//   blocks), each soft and hard (dash's `ulimit` without -H or -S), unsets the PWD that dash
//   exports (the program's environment is the box's, as a Docker box's), then execs perl;
//   where a limit cannot be set it exits 2 and runs nothing. No file in /tmp can outgrow the tmpfs
//   anyway; the file size limit bounds the one file the box may write elsewhere, the kubelet's
//   termination log, which lies on the node's disk and which every uid may write.
// - The Perl program makes itself undumpable (as the box timer does, and exits 1 where it
//   cannot); unless it is PID 1 it exits 1 and runs nothing (not in a PID namespace of its own,
//   as in a Pod sharing its process namespace, where kill(-1) would reach more than the box).
//   It makes a pipe and forks the FEEDER; then it puts the pipe's read end on its stdin, closes
//   everything else it opened, and execs `inner`, which so stays PID 1 (nothing in the box can
//   signal it), with the inner's exit status as the box's: 128 + N when box_command's child
//   dies of signal N, so 137 for the kill below, as for a Docker kill.
// - The FEEDER, undumpable too (it does not exec), SIGPIPE ignored, stderr closed, reads the
//   frame fed_program_frame() wrote from the real stdin: the header a byte at a time (1 to 12
//   digits, then a newline; anything else, or stdin ending first, and it exits 1 having
//   written nothing). Then it writes the ENVIRONMENT REPORT on the box's stdout, the first
//   bytes there: k_fed_environment_marker, then for each variable of its environment (the one
//   `inner` and so the program get: exec passes it on), in ascending byte order of the names,
//   a space, the name's bytes in lower-case hex, '=', the value's bytes in lower-case hex
//   (none for an empty value), and a newline. Where it cannot write all of it, it exits 1
//   and the program gets no byte. It closes stdout, then reads exactly the header's count of
//   bytes, which it passes into the pipe, which it then closes. Bytes it cannot pass (the interpreter gone) are read and dropped;
//   stdin ending early closes the pipe after what arrived. Then it reads the rest of stdin:
//   at end of stdin it exits 0; any other byte is ignored, except k_fed_kill_byte, on which it
//   reads the kill's nonce (fed_kill_line(): the 33 bytes after the byte, waiting at most 1 s
//   for each read of them). When they are exactly 32 lowercase hex digits and a newline it
//   writes fed_kill_record(nonce) to `termination_log` (truncating it; where it cannot open it,
//   nothing), and only then, or at once for anything else, sends SIGKILL to every process it
//   may signal (kill(-1): every process of the box but PID 1 and itself), and again every 50 ms
//   until the box ends, so that a process started after the byte dies too. The record comes
//   before the kill because the box ends with PID 1, which the kill makes exit. No process
//   waits for the feeder (it stays a zombie of PID 1 once it exits).
// So every stdout byte up to the report's newline is the feeder's, and every later one is
// written by the box's other processes (the program's): nothing of the box writes on stdout
// before its program starts, and the program starts only after the report.
// The program (box_command's interpreter) sees: stdin a pipe holding exactly the program, then
// end of file (even though the attach never closes the real stdin); fds 0-2 only;
// RLIMIT_NOFILE 128, RLIMIT_CORE 0 and RLIMIT_FSIZE `file_bytes`, soft and hard (a write past
// it fails with EFBIG: Python ignores SIGXFSZ); one process more in the box (the feeder,
// which it can kill, being of its uid: the kill byte is then lost, and the box timer in PID 1
// and the Pod's deletion remain). It never sees the kill's nonce (only the undumpable feeder
// holds the real stdin), so it can overwrite or erase the record (the kubelet's termination
// log is writable by every uid) but not forge it.
// `termination_log` must not contain ' or \ (std::invalid_argument otherwise).
std::vector<std::string> fed_box_command(const std::vector<std::string>& inner, std::int64_t file_bytes,
                                         std::string_view termination_log = k_fed_termination_log);
// The frame the daemon writes first on a fed box's stdin: the program's byte count in decimal,
// a newline, then the program.
std::string fed_program_frame(std::string_view program);
// What the daemon writes on a fed box's stdin after the frame to kill every process of the box
// but PID 1: k_fed_kill_byte, `nonce` (32 lowercase hex digits, made afresh for the kill) and a
// newline.
std::string fed_kill_line(std::string_view nonce);
// What the feeder writes to the termination log for that kill before it kills: "pybox-kill",
// a space, the nonce and a newline.
std::string fed_kill_record(std::string_view nonce);

}  // namespace pybox::proto
