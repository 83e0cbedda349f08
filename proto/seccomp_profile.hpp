// PyBox's own seccomp profile, given to every box as `seccomp=<JSON text>` and verified by the
// policy check before start. The text is proto/seccomp/pybox-seccomp-v2.json byte for byte,
// compiled into the binaries at build time (proto/CMakeLists.txt), so an installed pyboxd needs
// no source tree and `sha256sum` of that file equals the receipt's configured.seccomp_sha256.
//
// The profile is moby's default for Docker 20.10.24 (profiles/seccomp/default.json) minus what
// a box never needs and a hostile program could use: ptrace, process_vm_readv/writev and every
// other rule that needs a capability (boxes drop ALL), io_uring_*, memfd_create and
// memfd_secret (a file without a path, which /tmp's noexec cannot cover: since v2), and
// AF_VSOCK sockets. The default never allowed keyctl, add_key, request_key, userfaultfd, bpf or
// perf_event_open without a capability, so neither does this. A change to the file is a new
// version: copy it to pybox-seccomp-v<N+1>.json and move k_seccomp_profile_name, so receipts
// stay comparable (the older files stay, for the receipts that name them).
#pragma once

#include <string>
#include <string_view>

namespace pybox::proto {

inline constexpr std::string_view k_seccomp_profile_name = "pybox-seccomp-v2";

// The profile's JSON text, exactly as in the source tree.
std::string_view seccomp_profile_json();
// Lower-case hex SHA-256 of seccomp_profile_json().
const std::string& seccomp_profile_sha256();

}  // namespace pybox::proto
