// Whether a program PyBox is about to run (often as root) can be changed by someone PyBox
// should not trust: the one check behind macOS's colima and docker (daemon/macos/trusted_tools)
// and Linux's dockerd, containerd, runc and mmdebstrap (daemon/vm/engine_binaries,
// daemon/images/mmdebstrap_build).
//
// A binary is trusted under a TrustRule when, following its symbolic links (at most
// k_max_link_hops), every folder from / down to each link and to the final file is a real
// folder (not a link) owned by one of the rule's owners, not writable by others, and writable
// by its group only when that group is one of the rule's folder_writer_groups; and the final
// file is a regular file with the same owner rule, not writable by group or others, and
// executable by its owner. A link itself is never judged by its mode (a link's mode means
// nothing), only by the folder it sits in.
//
// Pure: the facts come through a FactsLookup (file_facts() in production, a map in tests) and
// nothing is run. Failure: "tool_untrusted", whose sentence names the binary and why.
#pragma once

#include "common/error.hpp"
#include "common/file_facts.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox {

inline constexpr int k_max_link_hops = 8;

using FactsLookup = std::function<std::optional<FileFacts>(const std::filesystem::path&)>;

// file_facts() of the real file system.
FactsLookup real_file_facts();

// Who may change a trusted binary and the folders on its way.
struct TrustRule {
    std::vector<unsigned> owners;                // uids that may own them
    std::vector<unsigned> folder_writer_groups;  // groups whose write access to a folder is tolerated
    std::string not_owner_text;                  // ends "<path> belongs to uid N, ...": "not root"
};

// Linux's rule for what PyBox runs as root: owned by root, writable by no one else.
TrustRule root_only_rule();

// Why `path` with these facts is not trustworthy as a `kind` (folder or regular file) under
// `rule`; nullopt when it is.
std::optional<std::string> untrusted_reason(const std::filesystem::path& path, const std::optional<FileFacts>& facts,
                                            FileFacts::Kind kind, const TrustRule& rule);

// Checks `binary` (absolute) as described above and returns it (the path to run), or
// "tool_untrusted": "PyBox does not run <binary>: <why>."
Expected<std::filesystem::path> check_trusted_binary(const std::filesystem::path& binary, const TrustRule& rule,
                                                     const FactsLookup& lookup);

// The first `dir`/`name` of `dirs` that exists (not followed), as a search of $PATH finds it;
// nullopt when none does.
std::optional<std::filesystem::path> first_in_dirs(std::string_view name, const std::vector<std::filesystem::path>& dirs,
                                                   const FactsLookup& lookup);

}  // namespace pybox
