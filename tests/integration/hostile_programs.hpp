// The hostile catalogue's programs (docs/hostile.md) that both the Docker suite (tests/hostile/)
// and the cluster suite (tests/integration/kube_hostile_test.cpp) run: one text each, so that a
// case means the same program on both, and what each suite checks is only how its box answers.
// Each returns Python source; the probes print their findings as one JSON document. Pure text;
// the functions that read findings fail nothing themselves.
#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <utility>
#include <vector>

namespace pybox::test {

// Python's `put(fd, data)`: every byte of `data` reaches the descriptor even if writes are
// partial. A prelude for the output cases (21-23).
std::string put_all_prelude();

// Case 6: tries to connect to each unix socket path in `paths` and to the abstract name
// `abstract_name`; prints {path: outcome, ..., "abstract": outcome}, an outcome being
// "connected" or the errno's name.
std::string unix_socket_probe_program(const std::vector<std::string>& paths, const std::string& abstract_name);

// Case 9: writes a file named `marker` in /tmp and /dev/shm; prints {dir: "written" or errno}.
std::string marker_writing_program(const std::string& marker);
// Case 9, the next run: prints {dir: sorted entries} for /tmp and /dev/shm (where it exists).
std::string marker_listing_program();

// Case 14: starts threads that sleep 60 s until one cannot start; prints {"threads": how many
// started, "error": the RuntimeError's words, "tasks": the tasks (threads of every process) the
// program's PID namespace held then}, and ends with exit 0.
std::string thread_bomb_program();

// Case 16: three children each allocate 50 MiB and hold it 1.5 s; prints "H held K killed" (how
// many exited 0, how many died of SIGKILL).
std::string memory_children_program();

// Case 19: spins 1.5 s of wall time; prints its CPU time over that wall time (3 decimals).
std::string cpu_share_program();

// Case 22: one 10 MiB line without a newline on stdout, in 1 MiB pieces, each followed by
// 100,000 bytes on stderr ('a' on stdout, 'b' on stderr).
std::string long_line_program();
inline constexpr std::size_t k_long_line_stdout_bytes = 10 * 1024 * 1024;
inline constexpr std::size_t k_long_line_stderr_bytes = 1'000'000;

// Case 42: reads the mount, cgroup and environment files of itself and PID 1 and the files an
// engine mounts (/etc/hostname, hosts, resolv.conf); prints {path: text or "error N", "uname": ...}.
std::string mount_probe_program();
// Every "<text> names <needle>" where a string of `found` (keys too) holds one of `forbidden`
// as a whole: not glued to further letters, digits, '.', '_' or '-' ("root" or "/root" in
// "/root/x", not in "/rootfs").
std::vector<std::string> texts_naming(const boost::json::value& found, const std::vector<std::string>& forbidden);

// Case 55: memfd_create through the C library and raw; /bin/true copied to /tmp and run through
// /proc/self/fd and execveat, and /bin/true through execveat (each exec in a child: 0 when it
// ran, 100 + errno when refused); a ctypes callback. Prints {"memfd_create", "memfd_create_raw":
// "succeeded" or errno, "memfd_exec", "exec_proc_self_fd", "execveat_written",
// "execveat_bin_true", "callback_sorted"}.
std::string memfd_exec_program();

// Case 56: reads the host-wide /proc counters; prints {"files": {path: text or "error N"},
// "pressure": /proc/pressure's entries or "error N", "cpu_count", "affinity"}.
std::string host_counters_program();

// Several probes in one run (one box): each program runs in a namespace of its own with its
// stdout taken, and the run prints {name: that program's JSON output}. For probes whose output
// is one JSON document and that end by returning, not by exiting.
std::string probes_in_one_run(const std::vector<std::pair<std::string, std::string>>& named_programs);

}  // namespace pybox::test
