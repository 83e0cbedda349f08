#include "daemon/vm/engine_checks.hpp"
#include "daemon/engine/docker_facts.hpp"
#include "daemon/vm/engine_process.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

namespace json = boost::json;
using namespace pybox::vm;
using pybox::config::DaemonConfig;

namespace {

// What Debian's dockerd 20.10.24 answered on GET /info for a private engine (trimmed).
json::value sample_info()
{
    return json::parse(R"({
        "OSType": "linux", "DockerRootDir": "/home/u/.pybox/runtime/engine/data",
        "SecurityOptions": ["name=seccomp,profile=default"],
        "CgroupDriver": "cgroupfs", "CgroupVersion": "1",
        "Runtimes": {"io.containerd.runc.v2": {"path": "runc"}, "runc": {"path": "runc"}},
        "DefaultRuntime": "runc", "ServerVersion": "20.10.24+dfsg1"})");
}

EngineExpectations private_expectations()
{
    return {true, "/home/u/.pybox/runtime/engine/data", "runc"};
}

std::vector<std::string> failed_checks(const json::value& info, const EngineExpectations& expected)
{
    std::vector<std::string> names;
    for (const auto& problem : check_info(pybox::engine::docker_engine_info(info), expected)) names.push_back(problem.check);
    return names;
}

const pybox::RuntimePaths k_paths("/home/u/.pybox/runtime");
constexpr std::string_view k_installation_id = "0123456789abcdef0123456789abcdef";

}  // namespace

TEST_CASE("A private engine reporting what PyBox asked for passes every info check")
{
    CHECK(check_info(pybox::engine::docker_engine_info(sample_info()), private_expectations()).empty());
}

TEST_CASE("Another engine answering on PyBox's socket fails the data-root check")
{
    auto info = sample_info();
    info.as_object()["DockerRootDir"] = "/var/lib/docker";
    const auto problems = check_info(pybox::engine::docker_engine_info(info), private_expectations());
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].check == "info.data_root");
    CHECK_THAT(problems[0].message, Catch::Contains("/var/lib/docker"));
}

TEST_CASE("An external engine's data-root is not checked")
{
    auto info = sample_info();
    info.as_object()["DockerRootDir"] = "/var/lib/docker";
    CHECK(check_info(pybox::engine::docker_engine_info(info), {false, {}, "runc"}).empty());
}

TEST_CASE("An engine without seccomp fails the seccomp check")
{
    auto info = sample_info();
    info.as_object()["SecurityOptions"] = json::array{"name=apparmor", "name=cgroupns"};
    CHECK(failed_checks(info, private_expectations()) == std::vector<std::string>{"info.seccomp"});
    info.as_object().erase("SecurityOptions");
    CHECK(failed_checks(info, private_expectations()) == std::vector<std::string>{"info.seccomp"});
}

TEST_CASE("An unknown cgroup driver or version fails the cgroup check")
{
    auto info = sample_info();
    info.as_object()["CgroupDriver"] = "none";
    CHECK(failed_checks(info, private_expectations()) == std::vector<std::string>{"info.cgroup"});
    info = sample_info();
    info.as_object()["CgroupVersion"] = "";
    CHECK(failed_checks(info, private_expectations()) == std::vector<std::string>{"info.cgroup"});
    info = sample_info();
    info.as_object()["CgroupDriver"] = "systemd";
    info.as_object()["CgroupVersion"] = "2";
    CHECK(check_info(pybox::engine::docker_engine_info(info), private_expectations()).empty());
}

TEST_CASE("A runtime the engine does not list fails the runtime check")
{
    auto expected = private_expectations();
    expected.runtime = "crun";
    const auto problems = check_info(pybox::engine::docker_engine_info(sample_info()), expected);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].check == "info.runtime");
    CHECK_THAT(problems[0].message, Catch::Contains("crun"));
}

TEST_CASE("A Windows engine fails the OS check")
{
    auto info = sample_info();
    info.as_object()["OSType"] = "windows";
    CHECK(failed_checks(info, private_expectations()) == std::vector<std::string>{"info.os_type"});
}

TEST_CASE("An info answer that is not an object fails with one problem")
{
    const auto problems = check_info(pybox::engine::docker_engine_info(json::value(json::array{})), private_expectations());
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].check == "info");
}

TEST_CASE("An engine older than API 1.40 or with a malformed version fails the ping check")
{
    CHECK_FALSE(check_api_version("1.41"));
    CHECK_FALSE(check_api_version("1.40"));
    CHECK_FALSE(check_api_version("2.0"));
    CHECK(check_api_version("1.39"));
    CHECK(check_api_version("1.4"));
    CHECK(check_api_version("one.41"));
    CHECK(check_api_version(""));
    CHECK(check_api_version("1.41.2"));
    CHECK(parse_api_version("1.41") == std::pair{1, 41});
}

TEST_CASE("The private engine's command line passes the listener check")
{
    const EngineLayout layout(k_paths, k_installation_id);
    const auto argv = dockerd_arguments(DaemonConfig{}, layout);
    CHECK_FALSE(check_listeners(argv, layout.socket, layout.config_file));
}

TEST_CASE("A TCP host in any spelling fails the listener check")
{
    const EngineLayout layout(k_paths, k_installation_id);
    for (const auto& extra : std::vector<std::vector<std::string>>{{"-H", "tcp://0.0.0.0:2375"},
                                                                   {"--host", "tcp://127.0.0.1:2375"},
                                                                   {"--host=tcp://[::1]:2375"},
                                                                   {"-Htcp://0.0.0.0:2375"},
                                                                   {"-H=fd://"}}) {
        auto argv = dockerd_arguments(DaemonConfig{}, layout);
        argv.insert(argv.end(), extra.begin(), extra.end());
        const auto problem = check_listeners(argv, layout.socket, layout.config_file);
        REQUIRE(problem);
        CHECK(problem->check == "listeners");
    }
}

TEST_CASE("A command line without PyBox's config file fails the listener check")
{
    const EngineLayout layout(k_paths, k_installation_id);
    auto argv = dockerd_arguments(DaemonConfig{}, layout);
    const auto flag = std::find(argv.begin(), argv.end(), "--config-file");
    argv.erase(flag, flag + 2);
    CHECK(check_listeners(argv, layout.socket, layout.config_file));
    CHECK(check_listeners({"/usr/sbin/dockerd"}, layout.socket, layout.config_file));
}

TEST_CASE("The private engine runs without bridge, iptables, TCP or the docker group")
{
    DaemonConfig config;
    config.runtime = "runsc";
    const EngineLayout layout(k_paths, k_installation_id);
    const auto argv = dockerd_arguments(config, layout);
    const auto has = [&](std::string_view flag, std::string_view value = {}) {
        const auto at = std::find(argv.begin(), argv.end(), flag);
        return at != argv.end() && (value.empty() || (at + 1 != argv.end() && at[1] == value));
    };
    CHECK(argv.front() == "/usr/sbin/dockerd");
    CHECK(has("--bridge", "none"));
    CHECK(has("--iptables=false"));
    CHECK(has("--ip-forward=false"));
    CHECK(has("--ip-masq=false"));
    CHECK(has("--log-driver", "none"));
    CHECK(has("--group", "root"));
    CHECK(has("--default-runtime", "runsc"));
    const std::string state = "/var/lib/pybox/" + engine_key(k_paths, k_installation_id);
    CHECK(has("--data-root", state + "/data"));
    CHECK(has("--exec-root", state + "/exec"));
    CHECK(has("-H", "unix:///home/u/.pybox/runtime/engine/docker.sock"));
    CHECK(has("--containerd-namespace", "pybox"));
}

TEST_CASE("The engine's data-root and exec-root name neither the user's home nor the user, and differ per runtime folder")
{
    const EngineLayout layout(k_paths, k_installation_id);
    const auto key = engine_key(k_paths, k_installation_id);
    CHECK(key.size() == 16);
    CHECK(key.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(layout.state_dir == "/var/lib/pybox/" + key);
    for (const auto& dir : {layout.data_root, layout.exec_root, layout.containerd_config}) {
        INFO(dir);
        CHECK(dir.string().starts_with(layout.state_dir.string() + "/"));
        CHECK(dir.string().find("/home") == std::string::npos);
        CHECK(dir.string().find("runtime") == std::string::npos);
    }
    CHECK(layout.socket == "/home/u/.pybox/runtime/engine/docker.sock");
    CHECK(engine_key(pybox::RuntimePaths("/home/v/.pybox/runtime"), k_installation_id) != key);
    CHECK(engine_key(k_paths, "fedcba9876543210fedcba9876543210") != key);
    // containerd's sockets under the exec-root always fit in a unix socket address.
    for (const auto& socket : layout.stale_sockets) CHECK(socket.string().size() < 108);
}

TEST_CASE("Our dockerd and containerd are recognised by their roots, not their names")
{
    const EngineLayout layout(k_paths, k_installation_id);
    const auto argv = dockerd_arguments(DaemonConfig{}, layout);
    CHECK(is_dockerd_of(argv, layout.data_root));
    CHECK_FALSE(is_dockerd_of(argv, "/var/lib/docker"));
    CHECK_FALSE(is_dockerd_of({"/usr/bin/dockerd", "-H", "fd://"}, layout.data_root));
    CHECK(is_dockerd_of({"dockerd", "--data-root=" + layout.data_root.string()}, layout.data_root));
    CHECK_FALSE(is_dockerd_of({"/bin/sleep", "--data-root", layout.data_root.string()}, layout.data_root));

    const std::vector<std::string> containerd{"containerd", "--config", layout.containerd_config.string(),
                                              "--log-level", "info"};
    CHECK(is_containerd_of(containerd, layout.containerd_config));
    CHECK_FALSE(is_containerd_of({"containerd", "--config", "/tmp/eng/exec/containerd/containerd.toml"},
                                 layout.containerd_config));
    CHECK_FALSE(is_containerd_of({"/usr/bin/containerd"}, layout.containerd_config));
}

TEST_CASE("A proc cmdline image splits at NUL bytes")
{
    using namespace std::string_literals;
    CHECK(split_cmdline("dockerd\0-H\0unix:///s\0"s) == std::vector<std::string>{"dockerd", "-H", "unix:///s"});
    CHECK(split_cmdline("no-terminator"s) == std::vector<std::string>{"no-terminator"});
    CHECK(split_cmdline(""s).empty());
}

TEST_CASE("A mount point is found in mountinfo, escapes included")
{
    const std::string_view mountinfo =
        "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
        "43 27 254:0 /tmp/a\\040b/engine/data /tmp/a\\040b/engine/data rw,relatime shared:2 - ext4 /dev/vda rw\n";
    CHECK(is_mount_point(mountinfo, "/tmp/a b/engine/data"));
    CHECK(is_mount_point(mountinfo, "/"));
    CHECK_FALSE(is_mount_point(mountinfo, "/tmp/a b/engine"));
    CHECK_FALSE(is_mount_point("", "/"));
}
