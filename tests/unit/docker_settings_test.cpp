#include "daemon/engine/docker_settings.hpp"
#include "daemon/run/box_spec.hpp"
#include "proto/seccomp_profile.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace pybox;
namespace json = boost::json;

namespace {

// The OCI runtime the engine's boxes run under (config.json's "runtime").
constexpr std::string_view k_runtime = "crun";

daemon::BoxIdentity identity()
{
    return {"0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210", 1900000000,
            "/pybox-0123456789abcdef0123456789abcdef/fedcba9876543210fedcba9876543210", 1001};
}

engine::BoxSpec box_spec(const proto::BoxPolicy& policy, const daemon::BoxIdentity& box = identity())
{
    return daemon::make_box_spec(policy, "sha256:abc", proto::box_command(2.0), box);
}

// The create body of that spec.
json::object create_body(const proto::BoxPolicy& policy) { return engine::docker_create_body(box_spec(policy), k_runtime); }

std::vector<engine::SettingMismatch> mismatches_found(const proto::BoxPolicy& policy, const json::value& inspected,
                                                const daemon::BoxIdentity& box = identity())
{
    return engine::check_docker_settings(box_spec(policy, box), k_runtime, inspected).mismatches;
}

// What the engine reports for a box created from make_box_spec (the shape of Docker 20.10's
// GET /containers/{id}/json, trimmed to the fields the check reads).
json::value inspected_from_spec(const proto::BoxPolicy& policy)
{
    const auto spec = create_body(policy);
    json::object host = spec.at("HostConfig").as_object();
    host["Binds"] = nullptr;  // the engine reports "no binds" as null
    host["PidMode"] = "";
    host["UTSMode"] = "";
    host["UsernsMode"] = "";
    host["CgroupnsMode"] = "";
    host["Ulimits"] = json::parse(R"([{"Name":"nofile","Hard":128,"Soft":128},{"Name":"core","Hard":0,"Soft":0}])");
    json::object config{{"User", spec.at("User")}, {"Tty", false}, {"Labels", spec.at("Labels")}, {"Image", "sha256:abc"}};
    return json::object{{"HostConfig", host}, {"Config", config}};
}

}  // namespace

TEST_CASE("A box created exactly as configured passes the policy check")
{
    const auto policy = *proto::policy_for_image("stdlib");
    CHECK(mismatches_found(policy, inspected_from_spec(policy)).empty());
}

TEST_CASE("The create body spells the cpu rate as NanoCpus and the tmpfs with its size and flags")
{
    const auto host = create_body(*proto::policy_for_image("stdlib")).at("HostConfig");
    CHECK(host.at("NanoCpus") == 500'000'000);
    CHECK(host.at("Tmpfs").at("/tmp") == "size=16777216,noexec,nodev,nosuid");
    CHECK(host.at("LogConfig").at("Type") == "none");
}

TEST_CASE("The create body names the engine's runtime, and a box under another runtime is a mismatch")
{
    const auto policy = *proto::policy_for_image("stdlib");
    CHECK(create_body(policy).at("HostConfig").at("Runtime").as_string() == k_runtime);
    auto inspected = inspected_from_spec(policy);
    inspected.at("HostConfig").as_object()["Runtime"] = "runc";
    const auto mismatches = mismatches_found(policy, inspected);
    REQUIRE(mismatches.size() == 1);
    CHECK(mismatches[0].field == "HostConfig.Runtime");
}

TEST_CASE("A different memory limit is a mismatch naming the field")
{
    const auto policy = *proto::policy_for_image("stdlib");
    auto inspected = inspected_from_spec(policy);
    inspected.at("HostConfig").as_object()["Memory"] = 0;
    const auto mismatches = mismatches_found(policy, inspected);
    REQUIRE(mismatches.size() == 1);
    CHECK(mismatches[0].field == "HostConfig.Memory");
    CHECK(mismatches[0].observed == "0");
}

TEST_CASE("Widening settings are each caught")
{
    const auto policy = *proto::policy_for_image("stdlib");
    const std::pair<const char*, json::value> widenings[] = {
        {"Binds", json::parse(R"(["/:/host"])")},
        {"Privileged", true},
        {"CapAdd", json::parse(R"(["SYS_ADMIN"])")},
        {"NetworkMode", "host"},
        {"PidMode", "host"},
        {"Devices", json::parse(R"([{"PathOnHost":"/dev/sda"}])")},
        {"SecurityOpt", json::parse(R"(["no-new-privileges","seccomp=unconfined"])")},
        {"ReadonlyRootfs", false},
        {"AutoRemove", true},
        {"PidsLimit", -1},
        {"ShmSize", 1 << 30},
        {"Runtime", "runsc"},
    };
    for (const auto& [field, value] : widenings) {
        auto inspected = inspected_from_spec(policy);
        inspected.at("HostConfig").as_object()[field] = value;
        const auto mismatches = mismatches_found(policy, inspected);
        INFO(field);
        REQUIRE(mismatches.size() == 1);
        CHECK(mismatches[0].field == std::string("HostConfig.") + field);
    }
}

TEST_CASE("The box hides the host-wide counters: /proc/stat, loadavg, meminfo and the boot id are masked")
{
    const auto policy = *proto::policy_for_image("stdlib");
    const auto body = create_body(policy);
    const auto& masked = body.at("HostConfig").at("MaskedPaths").as_array();
    for (const char* path : {"/proc/stat", "/proc/loadavg", "/proc/meminfo", "/proc/sys/kernel/random/boot_id",
                             "/proc/kcore", "/proc/keys", "/sys/firmware"}) {
        INFO(path);
        CHECK(std::find(masked.begin(), masked.end(), json::value(path)) != masked.end());
    }
    CHECK(body.at("HostConfig").at("ReadonlyPaths") ==
          json::parse(R"(["/proc/bus","/proc/fs","/proc/irq","/proc/sys","/proc/sysrq-trigger"])"));
}

TEST_CASE("Masked or read-only paths the engine left out, or its defaults alone, are a mismatch")
{
    // An engine that does not know the fields keeps its own defaults, which show none of PyBox's
    // masks; an empty list would mask nothing.
    const auto policy = *proto::policy_for_image("stdlib");
    const json::value variants[] = {
        nullptr,
        json::array{},
        json::parse(R"(["/proc/asound","/proc/acpi","/proc/kcore","/proc/keys","/proc/latency_stats",
                        "/proc/timer_list","/proc/timer_stats","/proc/sched_debug","/proc/scsi","/sys/firmware"])"),
    };
    for (const char* field : {"MaskedPaths", "ReadonlyPaths"}) {
        for (const auto& variant : variants) {
            auto inspected = inspected_from_spec(policy);
            inspected.at("HostConfig").as_object()[field] = variant;
            const auto mismatches = mismatches_found(policy, inspected);
            INFO(field << ": " << json::serialize(variant));
            REQUIRE(mismatches.size() == 1);
            CHECK(mismatches[0].field == std::string("HostConfig.") + field);
        }
        auto inspected = inspected_from_spec(policy);
        inspected.at("HostConfig").as_object().erase(field);
        const auto missing = mismatches_found(policy, inspected);
        REQUIRE(missing.size() == 1);
        CHECK(missing[0].observed == "missing");
    }
}

TEST_CASE("The box spec asks for no new privileges, PyBox's seccomp profile and no core dumps")
{
    const auto policy = *proto::policy_for_image("stdlib");
    const auto spec = create_body(policy);
    const auto& options = spec.at("HostConfig").at("SecurityOpt").as_array();
    REQUIRE(options.size() == 2);
    CHECK(options[0] == "no-new-privileges");
    CHECK(options[1].as_string() == "seccomp=" + std::string(proto::seccomp_profile_json()));
    CHECK(spec.at("HostConfig").at("Ulimits") ==
          json::parse(R"([{"Name":"nofile","Soft":128,"Hard":128},{"Name":"core","Soft":0,"Hard":0}])"));
}

TEST_CASE("A missing, unconfined, other or added seccomp profile is a SecurityOpt mismatch")
{
    const auto policy = *proto::policy_for_image("stdlib");
    const std::string ours = "seccomp=" + std::string(proto::seccomp_profile_json());
    const json::array variants[] = {
        {"no-new-privileges"},
        {"no-new-privileges", "seccomp=unconfined"},
        {"no-new-privileges", "seccomp:unconfined"},
        {"no-new-privileges", R"(seccomp={"defaultAction":"SCMP_ACT_ALLOW"})"},
        {"no-new-privileges", ours + " "},
        {"no-new-privileges", ours, "seccomp=unconfined"},
        {"no-new-privileges", ours, "apparmor=unconfined"},
        {"no-new-privileges:false", ours},
        {ours},
    };
    for (const auto& options : variants) {
        auto inspected = inspected_from_spec(policy);
        inspected.at("HostConfig").as_object()["SecurityOpt"] = options;
        const auto mismatches = mismatches_found(policy, inspected);
        INFO(json::serialize(options).substr(0, 200));
        REQUIRE(mismatches.size() == 1);
        CHECK(mismatches[0].field == "HostConfig.SecurityOpt");
        CHECK(mismatches[0].expected ==
              R"(["no-new-privileges","seccomp=sha256:)" + policy.seccomp_sha256 + R"("])");
        // The mismatch names a profile by its digest, never by its text.
        CHECK(mismatches[0].observed.find("defaultAction") == std::string::npos);
    }
    auto inspected = inspected_from_spec(policy);
    inspected.at("HostConfig").as_object().erase("SecurityOpt");
    const auto mismatches = mismatches_found(policy, inspected);
    REQUIRE(mismatches.size() == 1);
    CHECK(mismatches[0].observed == "missing");
}

TEST_CASE("A raised or missing core limit is an Ulimits mismatch")
{
    const auto policy = *proto::policy_for_image("stdlib");
    for (const char* ulimits : {R"([{"Name":"nofile","Hard":128,"Soft":128}])",
                                R"([{"Name":"nofile","Hard":128,"Soft":128},{"Name":"core","Hard":-1,"Soft":0}])"}) {
        auto inspected = inspected_from_spec(policy);
        inspected.at("HostConfig").as_object()["Ulimits"] = json::parse(ulimits);
        const auto mismatches = mismatches_found(policy, inspected);
        INFO(ulimits);
        REQUIRE(mismatches.size() == 1);
        CHECK(mismatches[0].field == "HostConfig.Ulimits");
    }
}

TEST_CASE("A missing HostConfig field is a mismatch, not a pass")
{
    const auto policy = *proto::policy_for_image("stdlib");
    auto inspected = inspected_from_spec(policy);
    inspected.at("HostConfig").as_object().erase("NanoCpus");
    const auto mismatches = mismatches_found(policy, inspected);
    REQUIRE(mismatches.size() == 1);
    CHECK(mismatches[0].observed == "missing");
}

TEST_CASE("A box of another run or owner fails the label check")
{
    const auto policy = *proto::policy_for_image("stdlib");
    auto other = identity();
    other.run_id = "00000000000000000000000000000000";
    CHECK(mismatches_found(policy, inspected_from_spec(policy), other).size() == 1);
}

TEST_CASE("The effective policy record lists what was read and the mismatches")
{
    const auto policy = *proto::policy_for_image("stdlib");
    auto inspected = inspected_from_spec(policy);
    inspected.at("HostConfig").as_object()["PidsLimit"] = -1;
    const auto record = engine::check_docker_settings(box_spec(policy), k_runtime, inspected).record;
    CHECK(record.at("HostConfig").at("Memory") == json::value(policy.memory_bytes));
    CHECK(record.at("mismatches").as_array().size() == 1);
}

TEST_CASE("The effective policy record names the seccomp profile the engine holds by its SHA-256")
{
    const auto policy = *proto::policy_for_image("stdlib");
    const auto record = engine::check_docker_settings(box_spec(policy), k_runtime, inspected_from_spec(policy)).record;
    CHECK(record.at("HostConfig").at("SecurityOpt") ==
          json::array{"no-new-privileges", "seccomp=sha256:" + policy.seccomp_sha256});
}

TEST_CASE("The box spec carries the labels, no TTY, stdin once, SIGKILL to stop and the fixed environment")
{
    const auto policy = *proto::policy_for_image("stdlib");
    const auto spec = create_body(policy);
    CHECK(spec.at("Image") == "sha256:abc");
    CHECK(spec.at("Tty") == false);
    CHECK(spec.at("StdinOnce") == true);
    CHECK(spec.at("Labels") == json::object{{"pybox.owner", "0123456789abcdef0123456789abcdef"},
                                            {"pybox.run", "fedcba9876543210fedcba9876543210"},
                                            {"pybox.expires", "1900000000"},
                                            {"pybox.user", "1001"}});
    CHECK(spec.at("HostConfig").at("AutoRemove") == false);
    CHECK(spec.at("StopSignal") == "SIGKILL");  // a warm box's waiting shell ignores SIGTERM
    for (const auto& entry : spec.at("Env").as_array()) {
        const std::string_view text = entry.as_string();
        CHECK((text.starts_with("PATH=") || text.starts_with("LANG=") || text.starts_with("HOME=")));
    }
}

TEST_CASE("A box placed under another cgroup parent than its run's is a mismatch")
{
    const auto policy = *proto::policy_for_image("stdlib");
    auto inspected = inspected_from_spec(policy);
    inspected.as_object()["HostConfig"].as_object()["CgroupParent"] = "/docker";
    const auto mismatches = mismatches_found(policy, inspected);
    REQUIRE(mismatches.size() == 1);
    CHECK(mismatches.front().field == "HostConfig.CgroupParent");
}

TEST_CASE("A box labelled with another user than its run's is a mismatch")
{
    const auto policy = *proto::policy_for_image("stdlib");
    auto inspected = inspected_from_spec(policy);
    inspected.at("Config").at("Labels").as_object()["pybox.user"] = "0";
    const auto mismatches = mismatches_found(policy, inspected);
    REQUIRE(mismatches.size() == 1);
    CHECK(mismatches.front().field == "Config.Labels");
}
