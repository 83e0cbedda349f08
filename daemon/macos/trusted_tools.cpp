#include "daemon/macos/trusted_tools.hpp"

#include "common/api_error_codes.hpp"

namespace pybox::macos {

namespace fs = std::filesystem;

TrustRule macos_rule(unsigned uid)
{
    return {{0, uid}, {k_admin_groups.begin(), k_admin_groups.end()}, "neither root nor you"};
}

std::optional<std::string> untrusted_reason(const fs::path& path, const std::optional<FileFacts>& facts,
                                            FileFacts::Kind kind, unsigned uid)
{
    return pybox::untrusted_reason(path, facts, kind, macos_rule(uid));
}

Expected<fs::path> check_tool(const fs::path& dir, std::string_view name, unsigned uid, const FactsLookup& lookup)
{
    return check_trusted_binary(dir / std::string(name), macos_rule(uid), lookup);
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
