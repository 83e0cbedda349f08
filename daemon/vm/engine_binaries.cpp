#include "daemon/vm/engine_binaries.hpp"

#include "common/api_error_codes.hpp"

namespace pybox::vm {

std::string engine_path_variable()
{
    std::string path;
    for (const auto dir : k_engine_path) path += (path.empty() ? "" : ":") + std::string(dir);
    return path;
}

Expected<std::vector<std::filesystem::path>> check_engine_binaries(const std::filesystem::path& dockerd,
                                                                   const FactsLookup& lookup)
{
    const TrustRule rule = root_only_rule();
    std::vector<std::filesystem::path> checked;
    auto trusted = check_trusted_binary(dockerd, rule, lookup);
    if (!trusted) return trusted.error();
    checked.push_back(*trusted);
    const std::vector<std::filesystem::path> dirs(k_engine_path.begin(), k_engine_path.end());
    for (const auto helper : k_engine_helpers) {
        const auto found = first_in_dirs(helper, dirs, lookup);
        if (!found)
            return make_error(api_error::k_engine_start_failed,
                              std::string(helper) + " is in none of " + engine_path_variable() +
                                  " (the PATH PyBox gives dockerd): install Debian's docker.io.");
        auto helper_trusted = check_trusted_binary(*found, rule, lookup);
        if (!helper_trusted) return helper_trusted.error();
        checked.push_back(*helper_trusted);
    }
    return checked;
}

}  // namespace pybox::vm
