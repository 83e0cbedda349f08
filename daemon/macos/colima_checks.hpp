// The checks `pybox vm start` makes on macOS after colima started the profile, as pure
// functions over what colima, Lima and the VM reported. ColimaVm gathers the four inputs:
//   - `colima status --profile pybox --json` (parse_colima_status): runtime, arch, sizes, Docker
//     socket, Kubernetes, a reachable address;
//   - the VM's /proc/self/mounts, read through ssh (parse_guest_mounts): a shared folder is a
//     virtiofs, 9p, FUSE (sshfs), NFS or SMB mount, whatever colima's config says;
//   - Lima's host agent log of this start, <instance>/ha.stderr.log (parse_hostagent_log): every
//     port and socket it forwarded, as it logged them;
//   - override.yaml read back from disk.
// All three parsers read untrusted-ish bytes (another program's output, a log the guest can
// add lines to through its listening ports): bounded in size, strict in shape, fuzzed
// (tests/fuzz/colima_fuzz.cpp). check_colima turns the facts into a verdict; any problem means
// ColimaVm stops the profile again and `pybox vm start` fails with the verdict's reason.
#pragma once

#include "common/error.hpp"
#include "daemon/macos/colima_profile.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::macos {

inline constexpr std::size_t k_max_status_bytes = 16 * 1024;
inline constexpr std::size_t k_max_mounts_bytes = 256 * 1024;
inline constexpr std::size_t k_max_mount_lines = 4096;
inline constexpr std::size_t k_max_hostagent_log_bytes = 4 * 1024 * 1024;

// `colima status --json` (colima 0.10's keys; any other key is refused, so a colima that
// reports something new is looked at before it is trusted). Absent optional keys are empty.
struct ColimaStatus {
    std::string display_name;
    std::string driver;
    std::string arch;
    std::string runtime;
    std::string mount_type;
    std::string ip_address;
    std::string docker_socket;
    std::string containerd_socket;
    std::string buildkitd_socket;
    std::string incus_socket;
    bool kubernetes = false;
    std::int64_t cpu = 0;
    std::int64_t memory = 0;  // bytes
    std::int64_t disk = 0;    // bytes
};

struct GuestMount {
    std::string source;
    std::string target;
    std::string fstype;
};

struct PortForward {
    std::string proto;  // "TCP" or "UDP"
    std::string guest;
    std::string host;
};

struct SocketForward {
    bool to_host = true;  // guest socket -> host socket; false: a host socket made reachable in the guest
    std::string guest;
    std::string host;
};

struct HostagentForwards {
    std::vector<PortForward> ports;
    std::vector<SocketForward> sockets;
};

struct ColimaFacts {
    ColimaStatus status;
    std::vector<GuestMount> mounts;
    HostagentForwards forwards;
    std::string override_on_disk;
};

struct ColimaProblem {
    std::string check;    // "status.display_name", "status.runtime", "status.arch", "status.kubernetes",
                          // "status.network", "status.docker_socket", "status.size", "mounts",
                          // "ports", "sockets", "override"
    std::string message;  // one sentence
};

struct ColimaVerdict {
    std::vector<ColimaProblem> problems;
    bool ok() const { return problems.empty(); }
    // "check: message; check: message" (empty when ok).
    std::string reason() const;
};

// Error code of the parsers: "colima_output_invalid", the message naming what and why.
Expected<ColimaStatus> parse_colima_status(std::string_view text);
Expected<std::vector<GuestMount>> parse_guest_mounts(std::string_view text);
Expected<HostagentForwards> parse_hostagent_log(std::string_view text);

// Whether a mount of this type shares a folder of another machine (the Mac) into the VM.
bool is_shared_folder_type(std::string_view fstype);

ColimaVerdict check_colima(const ColimaFacts& facts, const ColimaLayout& layout);

}  // namespace pybox::macos
