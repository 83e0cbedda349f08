#include "daemon/run/run_cgroup.hpp"

#include "common/api_error_codes.hpp"
#include "common/sha256.hpp"

namespace pybox::daemon {

std::string run_parent_path(std::string_view installation_id, std::string_view run_id)
{
    return "/pybox-" + sha256_hex(installation_id).substr(0, 16) + "/" + std::string(run_id);
}

Expected<RunCgroup> run_cgroup_for(const CgroupFacts& facts, std::string_view installation_id, std::string_view run_id)
{
    if (facts.driver != "cgroupfs")
        return make_error(api_error::k_cgroup_unsupported, "the engine uses the " + facts.driver +
                                                    " cgroup driver; PyBox places boxes under a run parent "
                                                    "only with cgroupfs");
    return RunCgroup{facts.version, run_parent_path(installation_id, run_id)};
}

}  // namespace pybox::daemon
