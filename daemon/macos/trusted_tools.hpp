// Where PyBox on macOS takes colima and docker from: /opt/homebrew/bin or /usr/local/bin only,
// never $PATH, and only a binary nobody but root or the user can change.
//
// A tool is trusted when, following its symbolic links (Homebrew links bin/colima into its
// Cellar; at most k_max_link_hops), every folder from / down to each link and to the final file
// is a real folder (not a link), owned by root or the user, not writable by others, and writable
// by its group only when that group is one of k_admin_groups, and the final file is a regular
// file with the same owner rule, not writable by group or others, and executable by its owner.
// Why the admin groups: Homebrew's installer makes its folders group-writable for macOS's admin
// group, whose members can become root with sudo anyway, so their write access to a folder
// grants them nothing they lack; any other group could be a user who cannot. The decision is a pure function of FileFacts looked up
// through a FactsLookup (file_facts in production, a map in tests); nothing here runs anything.
// Failure codes: "tool_missing" (in neither folder), "tool_untrusted" (the sentence names the
// path and why).
#pragma once

#include "common/error.hpp"
#include "common/file_facts.hpp"

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
inline constexpr int k_max_link_hops = 8;
// wheel (0) and admin (80) on macOS: groups whose members may already act as root.
inline constexpr std::array<unsigned, 2> k_admin_groups = {0, 80};

using FactsLookup = std::function<std::optional<FileFacts>(const std::filesystem::path&)>;

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
