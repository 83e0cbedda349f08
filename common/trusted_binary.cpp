#include "common/trusted_binary.hpp"

#include "common/api_error_codes.hpp"

#include <algorithm>
#include <sstream>

namespace pybox {

namespace {

namespace fs = std::filesystem;

std::string octal(unsigned mode)
{
    std::ostringstream text;
    text << '0' << std::oct << mode;
    return text.str();
}

bool contains(const std::vector<unsigned>& ids, unsigned id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); }

Error untrusted(const fs::path& binary, const std::string& why)
{
    return make_error(api_error::k_tool_untrusted, "PyBox does not run " + binary.string() + ": " + why + ".");
}

// Every folder from / down to `folder` itself.
std::optional<std::string> folder_chain_problem(const fs::path& folder, const TrustRule& rule, const FactsLookup& lookup)
{
    fs::path current = folder.root_path();
    if (auto why = untrusted_reason(current, lookup(current), FileFacts::Kind::folder, rule)) return why;
    for (const auto& part : folder.relative_path()) {
        if (part.empty()) continue;
        current /= part;
        if (auto why = untrusted_reason(current, lookup(current), FileFacts::Kind::folder, rule)) return why;
    }
    return std::nullopt;
}

}  // namespace

FactsLookup real_file_facts()
{
    return [](const fs::path& path) { return file_facts(path); };
}

TrustRule root_only_rule() { return {{0}, {}, "not root"}; }

std::optional<std::string> untrusted_reason(const fs::path& path, const std::optional<FileFacts>& facts,
                                            FileFacts::Kind kind, const TrustRule& rule)
{
    const std::string what = kind == FileFacts::Kind::folder ? "folder" : "file";
    if (!facts) return path.string() + " cannot be looked at";
    if (facts->kind != kind)
        return path.string() + " is not a " + (kind == FileFacts::Kind::folder ? "real folder" : "regular file");
    if (!contains(rule.owners, facts->uid))
        return "the " + what + " " + path.string() + " belongs to uid " + std::to_string(facts->uid) + ", " +
               rule.not_owner_text;
    const bool writer_group = contains(rule.folder_writer_groups, facts->gid);
    const unsigned forbidden = kind == FileFacts::Kind::folder && writer_group ? 002u : 022u;
    if ((facts->mode & forbidden) != 0)
        return "the " + what + " " + path.string() + " is writable by " +
               (forbidden == 002u ? "others" : "group or others") + " (mode " + octal(facts->mode) + ")";
    if (kind == FileFacts::Kind::regular_file && (facts->mode & 0100u) == 0)
        return path.string() + " is not executable by its owner";
    return std::nullopt;
}

Expected<fs::path> check_trusted_binary(const fs::path& binary, const TrustRule& rule, const FactsLookup& lookup)
{
    fs::path current = binary;
    for (int hop = 0; hop <= k_max_link_hops; ++hop) {
        if (!current.is_absolute()) return untrusted(binary, "it resolves to a relative path");
        if (auto why = folder_chain_problem(current.parent_path(), rule, lookup)) return untrusted(binary, *why);
        const auto facts = lookup(current);
        if (!facts) return untrusted(binary, current.string() + " cannot be looked at");
        if (facts->kind != FileFacts::Kind::symbolic_link) {
            if (auto why = untrusted_reason(current, facts, FileFacts::Kind::regular_file, rule))
                return untrusted(binary, *why);
            return binary;
        }
        if (!facts->link_target || facts->link_target->empty())
            return untrusted(binary, current.string() + " is an empty link");
        const fs::path& target = *facts->link_target;
        current = (target.is_absolute() ? target : current.parent_path() / target).lexically_normal();
    }
    return untrusted(binary, "it is a chain of more than " + std::to_string(k_max_link_hops) + " symbolic links");
}

std::optional<fs::path> first_in_dirs(std::string_view name, const std::vector<fs::path>& dirs, const FactsLookup& lookup)
{
    for (const auto& dir : dirs) {
        const fs::path candidate = dir / std::string(name);
        if (lookup(candidate)) return candidate;
    }
    return std::nullopt;
}

}  // namespace pybox
