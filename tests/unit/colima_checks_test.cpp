#include "daemon/macos/colima_checks.hpp"

#include "tests/support/temp_runtime.hpp"

#include <catch2/catch.hpp>

using namespace pybox;
using namespace pybox::macos;

namespace {


// `colima status --profile pybox --json` of colima 0.10 with the profile's flags (one line).
const std::string k_status =
    R"({"display_name":"colima [profile=pybox]","driver":"macOS Virtualization.Framework","arch":"aarch64",)"
    R"("runtime":"docker","mount_type":"virtiofs",)"
    R"("docker_socket":"unix:///Users/ada/.pybox/runtime/colima/pybox/docker.sock",)"
    R"("containerd_socket":"unix:///Users/ada/.pybox/runtime/colima/pybox/containerd.sock",)"
    R"("kubernetes":false,"cpu":2,"memory":2147483648,"disk":21474836480})"
    "\n";

// /proc/self/mounts of a colima VM started with --mount none (Ubuntu guest, trimmed).
const std::string k_mounts =
    "/dev/vda1 / ext4 rw,relatime,discard,errors=remount-ro 0 0\n"
    "devtmpfs /dev devtmpfs rw,relatime,size=1007892k,nr_inodes=251973,mode=755 0 0\n"
    "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
    "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
    "tmpfs /run tmpfs rw,nosuid,nodev,size=203612k,nr_inodes=819200,mode=755 0 0\n"
    "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate,memory_recursiveprot 0 0\n"
    "/dev/vdb /mnt/lima-cidata iso9660 ro,relatime,nojoliet,check=s,map=n,blocksize=2048 0 0\n"
    "/dev/vdc /var/lib/docker ext4 rw,relatime 0 0\n";

// Lima's host agent log (ha.stderr.log) of a start with override.yaml in place (trimmed).
const std::string k_log =
    R"({"level":"info","msg":"hostagent socket created at /Users/ada/.pybox/runtime/colima/_lima/colima-pybox/ha.sock","time":"2026-12-01T10:00:00Z"})"
    "\n"
    R"({"level":"info","msg":"[VZ] - vm state change: running","time":"2026-12-01T10:00:01Z"})"
    "\n"
    R"j({"level":"info","msg":"Forwarding `/var/run/docker.sock` (guest) to `/Users/ada/.pybox/runtime/colima/pybox/docker.sock` (host)","time":"2026-12-01T10:00:09Z"})j"
    "\n"
    R"j({"level":"info","msg":"Forwarding `/var/run/containerd/containerd.sock` (guest) to `/Users/ada/.pybox/runtime/colima/pybox/containerd.sock` (host)","time":"2026-12-01T10:00:09Z"})j"
    "\n"
    R"({"level":"info","msg":"Not forwarding TCP 0.0.0.0:22","time":"2026-12-01T10:00:10Z"})"
    "\n"
    R"({"level":"info","msg":"Not forwarding TCP [::]:22","time":"2026-12-01T10:00:10Z"})"
    "\n";

ColimaFacts good_facts()
{
    ColimaFacts facts;
    facts.status = parse_colima_status(k_status).value();
    facts.mounts = parse_guest_mounts(k_mounts).value();
    facts.forwards = parse_hostagent_log(k_log).value();
    facts.override_on_disk = override_yaml();
    return facts;
}

std::vector<std::string> checks_of(const ColimaVerdict& verdict)
{
    std::vector<std::string> checks;
    for (const auto& problem : verdict.problems) checks.push_back(problem.check);
    return checks;
}

}  // namespace

TEST_CASE("colima's status of the profile is parsed into every field")
{
    const auto status = parse_colima_status(k_status);
    REQUIRE(status.has_value());
    CHECK(status->display_name == "colima [profile=pybox]");
    CHECK(status->driver == "macOS Virtualization.Framework");
    CHECK(status->arch == "aarch64");
    CHECK(status->runtime == "docker");
    CHECK(status->docker_socket == "unix:///Users/ada/.pybox/runtime/colima/pybox/docker.sock");
    CHECK_FALSE(status->kubernetes);
    CHECK(status->cpu == 2);
    CHECK(status->memory == 2147483648);
    CHECK(status->disk == 21474836480);
    CHECK(status->ip_address.empty());
}

TEST_CASE("A status with an unknown key, a wrong type, a repeated key or trailing bytes is refused")
{
    for (const std::string text : {
             R"({"display_name":"x","arch":"aarch64","runtime":"docker","mounts":[]})",
             R"({"display_name":"x","arch":"aarch64","runtime":"docker","cpu":"2"})",
             R"({"display_name":"x","arch":"aarch64","runtime":"docker","cpu":-1})",
             R"({"display_name":"x","arch":"aarch64","runtime":"docker","kubernetes":0})",
             R"({"display_name":"x","arch":"aarch64","runtime":"docker","runtime":"containerd"})",
             R"({"display_name":"x","arch":"aarch64"})",
             R"({"display_name":"x","arch":"aarch64","runtime":"docker"} {})",
             R"(["display_name"])",
             "colima [profile=pybox] is not running",
         }) {
        INFO(text);
        const auto status = parse_colima_status(text);
        REQUIRE_FALSE(status.has_value());
        CHECK(status.error().code == "colima_output_invalid");
    }
    CHECK_FALSE(parse_colima_status(std::string(k_max_status_bytes + 1, ' ')).has_value());
}

TEST_CASE("The VM's mounts are read line by line, strictly")
{
    const auto mounts = parse_guest_mounts(k_mounts);
    REQUIRE(mounts.has_value());
    REQUIRE(mounts->size() == 8);
    CHECK(mounts->at(6).target == "/mnt/lima-cidata");
    CHECK(mounts->at(6).fstype == "iso9660");
    for (const std::string& text : {std::string(), std::string("/dev/vda1 / ext4 rw 0\n"), std::string("/dev/vda1  / ext4 rw 0 0\n"), std::string("/dev/vda1 / ext4 rw 1 0\n"),
                                   std::string("/dev/vda1 /\x01 ext4 rw 0 0\n")}) {
        INFO(text);
        CHECK_FALSE(parse_guest_mounts(text).has_value());
    }
}

TEST_CASE("The host agent log yields every port and socket Lima forwarded")
{
    const auto forwards = parse_hostagent_log(k_log);
    REQUIRE(forwards.has_value());
    CHECK(forwards->ports.empty());
    REQUIRE(forwards->sockets.size() == 2);
    CHECK(forwards->sockets[0].to_host);
    CHECK(forwards->sockets[0].guest == "/var/run/docker.sock");
    CHECK(forwards->sockets[0].host == "/Users/ada/.pybox/runtime/colima/pybox/docker.sock");

    const auto with_port = parse_hostagent_log(
        k_log + R"({"level":"info","msg":"Forwarding TCP from 127.0.0.1:8080 to 127.0.0.1:8080","time":"t"})" "\n" +
        R"j({"level":"info","msg":"Forwarding `/Users/ada/.ssh/agent.sock` (host) to `/tmp/agent.sock` (guest)","time":"t"})j" "\n");
    REQUIRE(with_port.has_value());
    REQUIRE(with_port->ports.size() == 1);
    CHECK(with_port->ports[0].proto == "TCP");
    CHECK(with_port->ports[0].guest == "127.0.0.1:8080");
    REQUIRE(with_port->sockets.size() == 3);
    CHECK_FALSE(with_port->sockets[2].to_host);
    CHECK(with_port->sockets[2].host == "/Users/ada/.ssh/agent.sock");
}

TEST_CASE("Lines that are not JSON are passed over, but a forwarding PyBox cannot read is refused")
{
    CHECK(parse_hostagent_log("panic: runtime error\ngoroutine 1 [running]:\n").has_value());
    for (const std::string line : {
             R"({"level":"info","msg":"Forwarding somewhere","time":"t"})",
             R"({"level":"info","msg":"Forwarding TCP from 1.2.3.4:1","time":"t"})",
             R"({"level":"info","time":"t"})",
             R"({"level":"info","msg":"x","msg":"y"})",
             R"({"level":"info","msg":"x")",
         }) {
        INFO(line);
        const auto forwards = parse_hostagent_log(line + "\n");
        REQUIRE_FALSE(forwards.has_value());
        CHECK(forwards.error().code == "colima_output_invalid");
    }
}

TEST_CASE("A VM as PyBox started it passes every check")
{
    const auto verdict = check_colima(good_facts(), ColimaLayout(pybox::test::k_mac_user_paths));
    CHECK(verdict.ok());
    CHECK(verdict.reason().empty());
}

TEST_CASE("A shared folder in the VM fails the mounts check, naming it")
{
    auto facts = good_facts();
    facts.mounts.push_back({"mount0", "/Users/ada", "virtiofs"});
    facts.mounts.push_back({"/Users/ada/src", "/Users/ada/src", "fuse.sshfs"});
    const auto verdict = check_colima(facts, ColimaLayout(pybox::test::k_mac_user_paths));
    CHECK(checks_of(verdict) == std::vector<std::string>{"mounts", "mounts"});
    CHECK_THAT(verdict.reason(), Catch::Contains("mounts: a shared folder (virtiofs mount0) is mounted at /Users/ada"));
}

TEST_CASE("Shared-folder mount types are the network and host file systems, not the VM's own")
{
    for (const auto* shared : {"virtiofs", "9p", "fuse.sshfs", "fuse", "sshfs", "nfs", "nfs4", "cifs", "smb3"})
        CHECK(is_shared_folder_type(shared));
    for (const auto* own : {"ext4", "iso9660", "tmpfs", "overlay", "proc", "cgroup2", "fusectl"})
        CHECK_FALSE(is_shared_folder_type(own));
}

TEST_CASE("A forwarded port fails the ports check")
{
    auto facts = good_facts();
    facts.forwards.ports.push_back({"TCP", "0.0.0.0:8080", "127.0.0.1:8080"});
    const auto verdict = check_colima(facts, ColimaLayout(pybox::test::k_mac_user_paths));
    CHECK(checks_of(verdict) == std::vector<std::string>{"ports"});
    CHECK_THAT(verdict.reason(), Catch::Contains("Lima forwarded TCP 0.0.0.0:8080 of the VM to 127.0.0.1:8080"));
}

TEST_CASE("A socket forwarded anywhere but the profile's Docker and containerd sockets fails the sockets check")
{
    auto facts = good_facts();
    facts.forwards.sockets.push_back({true, "/var/run/docker.sock", "/Users/ada/.colima/default/docker.sock"});
    facts.forwards.sockets.push_back({false, "/tmp/agent.sock", "/Users/ada/.ssh/agent.sock"});
    const auto verdict = check_colima(facts, ColimaLayout(pybox::test::k_mac_user_paths));
    CHECK(checks_of(verdict) == std::vector<std::string>{"sockets", "sockets"});
    CHECK_THAT(verdict.reason(), Catch::Contains("this Mac's socket /Users/ada/.ssh/agent.sock is forwarded"));
}

TEST_CASE("The wrong runtime, arch, profile, socket, sizes, Kubernetes or an address each fail their check")
{
    const ColimaLayout layout(pybox::test::k_mac_user_paths);
    const auto one = [&](auto change) {
        auto facts = good_facts();
        change(facts.status);
        return checks_of(check_colima(facts, layout));
    };
    CHECK(one([](ColimaStatus& s) { s.runtime = "containerd"; }) == std::vector<std::string>{"status.runtime"});
    CHECK(one([](ColimaStatus& s) { s.arch = "x86_64"; }) == std::vector<std::string>{"status.arch"});
    CHECK(one([](ColimaStatus& s) { s.display_name = "colima"; }) == std::vector<std::string>{"status.display_name"});
    CHECK(one([](ColimaStatus& s) { s.kubernetes = true; }) == std::vector<std::string>{"status.kubernetes"});
    CHECK(one([](ColimaStatus& s) { s.ip_address = "192.168.106.2"; }) == std::vector<std::string>{"status.network"});
    CHECK(one([](ColimaStatus& s) { s.docker_socket = "unix:///Users/ada/.colima/default/docker.sock"; }) ==
          std::vector<std::string>{"status.docker_socket"});
    CHECK(one([](ColimaStatus& s) { s.memory = 8LL << 30; }) == std::vector<std::string>{"status.size"});
    // Sizes colima could not read (0) are not held against the VM.
    CHECK(one([](ColimaStatus& s) { s.cpu = s.memory = s.disk = 0; }).empty());
}

TEST_CASE("An override.yaml changed on disk fails the override check")
{
    auto facts = good_facts();
    facts.override_on_disk = "portForwards: []\n";
    const auto verdict = check_colima(facts, ColimaLayout(pybox::test::k_mac_user_paths));
    CHECK(checks_of(verdict) == std::vector<std::string>{"override"});
    CHECK_THAT(verdict.reason(), Catch::Contains("override.yaml is not the file PyBox wrote"));
}
