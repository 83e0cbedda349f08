#include "daemon/run/run_cgroup.hpp"

#include "common/sha256.hpp"

#include <boost/json/value.hpp>

namespace pybox::daemon {

namespace json = boost::json;

Expected<CgroupFacts> cgroup_facts_from_info(const json::value& info)
{
    const auto* object = info.if_object();
    const auto* version = object ? object->if_contains("CgroupVersion") : nullptr;
    const auto* driver = object ? object->if_contains("CgroupDriver") : nullptr;
    if (version == nullptr || !version->is_string() || driver == nullptr || !driver->is_string())
        return make_error("cgroup_unknown", "the engine's /info names no CgroupVersion or CgroupDriver");
    CgroupFacts facts;
    if (version->get_string() == "1") facts.version = 1;
    else if (version->get_string() == "2") facts.version = 2;
    else
        return make_error("cgroup_unknown",
                          "the engine's cgroup version \"" + std::string(version->get_string()) + "\" is not 1 or 2");
    facts.driver = driver->get_string();
    return facts;
}

std::string RunCgroup::box(std::string_view container_id) const
{
    return parent + "/" + std::string(container_id);
}

std::string run_parent_path(std::string_view installation_id, std::string_view run_id)
{
    return "/pybox-" + sha256_hex(installation_id).substr(0, 16) + "/" + std::string(run_id);
}

Expected<RunCgroup> run_cgroup_for(const CgroupFacts& facts, std::string_view installation_id, std::string_view run_id)
{
    if (facts.driver != "cgroupfs")
        return make_error("cgroup_unsupported", "the engine uses the " + facts.driver +
                                                    " cgroup driver; PyBox places boxes under a run parent "
                                                    "only with cgroupfs");
    return RunCgroup{facts.version, run_parent_path(installation_id, run_id)};
}

}  // namespace pybox::daemon
