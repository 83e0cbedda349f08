// Where PyBox on macOS takes colima and docker from: /opt/homebrew/bin or /usr/local/bin only,
// never $PATH, and only a binary nobody but root or the user can change.
//
// A tool is trusted under common/trusted_binary's check with macOS's rule: the final file and
// every folder on its way (links followed, at most k_max_link_hops) owned by root or the user,
// the file writable by neither group nor others, a folder writable by its group only when that
// group is one of k_admin_groups. Why the admin groups: Homebrew's installer makes its folders
// group-writable for macOS's admin group, whose members can become root with sudo anyway, so
// their write access to a folder grants them nothing they lack; any other group could be a user
// who cannot. The decision is a pure function of FileFacts looked up through a FactsLookup
// (file_facts in production, a map in tests); nothing here runs anything.
// Failure codes: "tool_missing" (in neither folder), "tool_untrusted" (the sentence names the
// path and why).
#pragma once

#include "common/error.hpp"
#include "common/file_facts.hpp"
#include "common/trusted_binary.hpp"

#include <array>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::macos {

// Searched in this order; the first folder that holds the tool decides (an untrusted tool in the
// first is refused, never passed over for the second).
inline constexpr std::array<std::string_view, 2> k_trusted_tool_dirs = {"/opt/homebrew/bin", "/usr/local/bin"};
using pybox::k_max_link_hops;
// wheel (0) and admin (80) on macOS: groups whose members may already act as root.
inline constexpr std::array<unsigned, 2> k_admin_groups = {0, 80};

using pybox::FactsLookup;

// macOS's rule for user `uid`: owned by root or `uid`, folders writable by the admin groups.
TrustRule macos_rule(unsigned uid);

// Why `path` with these facts is not trustworthy as a `kind` (folder or regular file) for user
// `uid`; nullopt when it is.
std::optional<std::string> untrusted_reason(const std::filesystem::path& path, const std::optional<FileFacts>& facts,
                                            FileFacts::Kind kind, unsigned uid);

// Checks `dir`/`name` as described above and returns that path (the one to run).
Expected<std::filesystem::path> check_tool(const std::filesystem::path& dir, std::string_view name, unsigned uid,
                                           const FactsLookup& lookup);

// The tool `name` from the first of k_trusted_tool_dirs that holds it, checked.
Expected<std::filesystem::path> locate_tool(std::string_view name, unsigned uid, const FactsLookup& lookup);

}  // namespace pybox::macos
