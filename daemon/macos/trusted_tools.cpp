#include "daemon/macos/trusted_tools.hpp"

#include "common/api_error_codes.hpp"

#include <algorithm>
#include <sstream>

namespace pybox::macos {

namespace {

namespace fs = std::filesystem;

std::string octal(unsigned mode)
{
    std::ostringstream text;
    text << '0' << std::oct << mode;
    return text.str();
}

Error untrusted(const fs::path& tool, const std::string& why)
{
    return make_error(api_error::k_tool_untrusted, "PyBox does not run " + tool.string() + ": " + why + ".");
}

// Every folder from / down to `folder` itself.
std::optional<std::string> folder_chain_problem(const fs::path& folder, unsigned uid, const FactsLookup& lookup)
{
    fs::path current = folder.root_path();
    if (auto why = untrusted_reason(current, lookup(current), FileFacts::Kind::folder, uid)) return why;
    for (const auto& part : folder.relative_path()) {
        if (part.empty()) continue;
        current /= part;
        if (auto why = untrusted_reason(current, lookup(current), FileFacts::Kind::folder, uid)) return why;
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> untrusted_reason(const fs::path& path, const std::optional<FileFacts>& facts,
                                            FileFacts::Kind kind, unsigned uid)
{
    const std::string what = kind == FileFacts::Kind::folder ? "folder" : "file";
    if (!facts) return path.string() + " cannot be looked at";
    if (facts->kind != kind)
        return path.string() + " is not a " + (kind == FileFacts::Kind::folder ? "real folder" : "regular file");
    if (facts->uid != 0 && facts->uid != uid)
        return "the " + what + " " + path.string() + " belongs to uid " + std::to_string(facts->uid) +
               ", neither root nor you";
    const bool admin_group =
        std::find(k_admin_groups.begin(), k_admin_groups.end(), facts->gid) != k_admin_groups.end();
    const unsigned forbidden = kind == FileFacts::Kind::folder && admin_group ? 002u : 022u;
    if ((facts->mode & forbidden) != 0)
        return "the " + what + " " + path.string() + " is writable by " +
               (forbidden == 002u ? "others" : "group or others") + " (mode " + octal(facts->mode) + ")";
    if (kind == FileFacts::Kind::regular_file && (facts->mode & 0100u) == 0)
        return path.string() + " is not executable by its owner";
    return std::nullopt;
}

Expected<fs::path> check_tool(const fs::path& dir, std::string_view name, unsigned uid, const FactsLookup& lookup)
{
    const fs::path tool = dir / std::string(name);
    fs::path current = tool;
    for (int hop = 0; hop <= k_max_link_hops; ++hop) {
        if (!current.is_absolute()) return untrusted(tool, "it resolves to a relative path");
        if (auto why = folder_chain_problem(current.parent_path(), uid, lookup)) return untrusted(tool, *why);
        const auto facts = lookup(current);
        if (!facts) return untrusted(tool, current.string() + " cannot be looked at");
        if (facts->kind != FileFacts::Kind::symbolic_link) {
            if (auto why = untrusted_reason(current, facts, FileFacts::Kind::regular_file, uid))
                return untrusted(tool, *why);
            return tool;
        }
        if (!facts->link_target || facts->link_target->empty()) return untrusted(tool, current.string() + " is an empty link");
        const fs::path& target = *facts->link_target;
        current = (target.is_absolute() ? target : current.parent_path() / target).lexically_normal();
    }
    return untrusted(tool, "it is a chain of more than " + std::to_string(k_max_link_hops) + " symbolic links");
}

Expected<fs::path> locate_tool(std::string_view name, unsigned uid, const FactsLookup& lookup)
{
    for (const auto dir : k_trusted_tool_dirs) {
        const fs::path tool = fs::path(std::string(dir)) / std::string(name);
        if (!lookup(tool)) continue;
        return check_tool(tool.parent_path(), name, uid, lookup);
    }
    return make_error(api_error::k_tool_missing, std::string(name) + " is in neither /opt/homebrew/bin nor /usr/local/bin (" +
                                          "PyBox never searches $PATH): install it with Homebrew.");
}

}  // namespace pybox::macos
