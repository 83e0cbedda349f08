#include "daemon/run/run_cgroup.hpp"
#include "daemon/engine/docker_facts.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

using namespace pybox::daemon;
namespace json = boost::json;

TEST_CASE("The engine's /info gives the cgroup version and driver")
{
    const auto facts = pybox::engine::cgroup_facts_from_info(pybox::engine::docker_engine_info(json::parse(R"({"CgroupVersion": "1", "CgroupDriver": "cgroupfs"})")));
    REQUIRE(facts.has_value());
    CHECK(facts->version == 1);
    CHECK(facts->driver == "cgroupfs");
}

TEST_CASE("An /info without a known cgroup version is an error, not a guess")
{
    CHECK_FALSE(pybox::engine::cgroup_facts_from_info(pybox::engine::docker_engine_info(json::parse(R"({"CgroupDriver": "cgroupfs"})"))).has_value());
    CHECK_FALSE(pybox::engine::cgroup_facts_from_info(pybox::engine::docker_engine_info(json::parse(R"({"CgroupVersion": "3", "CgroupDriver": "cgroupfs"})"))).has_value());
    CHECK_FALSE(pybox::engine::cgroup_facts_from_info(pybox::engine::docker_engine_info(json::parse(R"([])"))).has_value());
}

TEST_CASE("Each run gets its own parent under the installation's cgroup")
{
    const auto cgroup = run_cgroup_for({2, "cgroupfs"}, "inst", "run1");
    REQUIRE(cgroup.has_value());
    CHECK(cgroup->version == 2);
    CHECK(cgroup->parent == run_parent_path("inst", "run1"));
}

TEST_CASE("The systemd cgroup driver gets no run parent, and says why")
{
    const auto cgroup = run_cgroup_for({2, "systemd"}, "inst", "run1");
    REQUIRE_FALSE(cgroup.has_value());
    CHECK(cgroup.error().code == "cgroup_unsupported");
    CHECK_THAT(cgroup.error().message, Catch::Contains("systemd"));
}

TEST_CASE("A run parent's path names a digest of the installation, never the installation ID itself")
{
    const std::string installation = "0123456789abcdef0123456789abcdef";
    const auto path = run_parent_path(installation, "run1");
    CHECK(path.find(installation) == std::string::npos);
    CHECK(path.size() == std::string("/pybox-").size() + 16 + std::string("/run1").size());
    CHECK(path == run_parent_path(installation, "run1"));
    CHECK(path != run_parent_path("fedcba9876543210fedcba9876543210", "run1"));
}
