// ColimaVm against a scripted stand-in for colima (a shell script that answers each subcommand
// the way colima 0.10 does and records its calls): the glue is tested here on Linux; only the
// real colima is left to macOS.
#include "daemon/macos/colima_vm.hpp"
#include "tests/support/fake_colima.hpp"
#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace pybox;
using namespace pybox::macos;
namespace fs = std::filesystem;

using test::FakeColima;

TEST_CASE("ColimaVm starts the profile, checks it, pins the host key and answers the socket and the ssh target")
{
    FakeColima fake;
    auto vm = fake.vm();
    const auto started = vm.start();
    REQUIRE(started.has_value());
    CHECK(started->docker_socket == vm.layout().docker_socket);
    CHECK(started->watcher_target.address == engine::SshAddress{"ada", "127.0.0.1", 60022});
    CHECK(started->watcher_target.identity_file == vm.layout().lima_key);
    CHECK(started->watcher_target.host_key_sha256 ==
          std::optional<std::string>("SHA256:VZ25S2eYzkLAezlMX5f77FRikwEEkGc2jTPQIxihLe8"));

    CHECK(test::read_text(vm.layout().override_file) == override_yaml());
    CHECK(test::read_text(vm.layout().docker_config_file) == anonymous_docker_config());
    CHECK((fs::status(vm.layout().override_file).permissions() & fs::perms::all) == fs::perms(0600));
    CHECK((fs::status(vm.layout().colima_home).permissions() & fs::perms::all) == fs::perms(0700));
    CHECK(test::read_text(vm.layout().host_key_pin) == "SHA256:VZ25S2eYzkLAezlMX5f77FRikwEEkGc2jTPQIxihLe8\n");

    const auto calls = fake.called();
    CHECK_THAT(calls, Catch::Contains("start --profile pybox --cpus 2"));
    CHECK_THAT(calls, Catch::Contains("COLIMA_HOME=" + vm.layout().colima_home.string()));
    CHECK_THAT(calls, !Catch::Contains("stop --profile"));
}

TEST_CASE("ColimaVm stops the VM again and says why when a shared folder is mounted")
{
    FakeColima fake;
    std::ofstream(fake.mounts, std::ios::app) << "mount0 /Users/ada virtiofs rw,relatime 0 0\n";
    const auto started = fake.vm().start();
    REQUIRE_FALSE(started.has_value());
    CHECK(started.error().code == "engine_check_failed");
    CHECK_THAT(started.error().message, Catch::Contains("The colima VM was stopped again: mounts: a shared folder"));
    CHECK_THAT(fake.called(), Catch::Contains("stop --profile pybox"));
}

TEST_CASE("ColimaVm stops the VM again when what colima reports cannot be read")
{
    FakeColima fake;
    std::ofstream(fake.mounts) << "garbage\n";
    const auto started = fake.vm().start();
    REQUIRE_FALSE(started.has_value());
    CHECK(started.error().code == "engine_check_failed");
    CHECK_THAT(started.error().message, Catch::Contains("/proc/self/mounts is not what PyBox expects"));
    CHECK_THAT(fake.called(), Catch::Contains("stop --profile pybox"));
}

TEST_CASE("ColimaVm refuses a colima older than 0.10.0 before starting anything")
{
    FakeColima fake;
    std::ofstream(fake.version) << "colima version 0.9.1\n";
    const auto started = fake.vm().start();
    REQUIRE_FALSE(started.has_value());
    CHECK(started.error().code == "colima_too_old");
    CHECK_THAT(fake.called(), !Catch::Contains("start --profile"));
}

TEST_CASE("ColimaVm keeps the pinned host key and refuses a damaged pin file")
{
    FakeColima fake;
    auto vm = fake.vm();
    REQUIRE(vm.start().has_value());
    std::ofstream(vm.layout().host_key_pin) << "SHA256:tampered\n";
    const auto again = vm.start();
    REQUIRE_FALSE(again.has_value());
    CHECK(again.error().code == "host_key_pin_invalid");
}
