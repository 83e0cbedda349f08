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
    std::int64_t nano_cpus = 0;          // 1e9 = one core
    std::string user = "10000:10000";
    bool readonly_root = true;
    std::string tmpfs_path = "/tmp";
    std::int64_t tmpfs_bytes = 16 * 1024 * 1024;
    std::string tmpfs_options = "noexec,nodev,nosuid";
    std::string network = "none";
    std::int64_t open_files = 128;
    std::int64_t core_dump_bytes = 0;    // the `core` ulimit, soft and hard: no core dumps
    std::string log_driver = "none";
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

    double cpu_cores() const { return static_cast<double>(nano_cpus) / 1e9; }
    // The tmpfs option string as the engine expects it, e.g. "size=16777216,noexec,nodev,nosuid".
    std::string tmpfs_mount_options() const;

    friend bool operator==(const BoxPolicy&, const BoxPolicy&) = default;
};

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

}  // namespace pybox::proto
