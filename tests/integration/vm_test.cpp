// The private engine, setup, a missing engine, and the suite's promise that nothing is left.
#include "tests/integration/harness.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/unfinished_command.hpp"

#include "common/files.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <thread>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;

TEST_CASE("vm status --json says the private engine is running and verified")
{
    const auto run = run_pybox({"vm", "status", "--json"});
    CHECK(run.exit_code == 0);
    const auto status = json::parse(run.output);
    CHECK(status.at("running") == true);
    CHECK(status.at("verified") == true);
    CHECK(status.at("engine_socket").as_string() == (runtime_home() / "engine" / "docker.sock").string());
}

TEST_CASE("Setup with nothing changed says the image is up to date")
{
    const auto run = run_pybox({"setup"});
    INFO(run.output << run.error_output);
    CHECK(run.exit_code == 0);
    CHECK(run.output.find("up to date") != std::string::npos);
}

TEST_CASE("Setup with --quiet prints its result and no progress")
{
    const auto run = run_pybox({"setup", "--quiet"});
    INFO(run.output << run.error_output);
    CHECK(run.exit_code == 0);
    CHECK(run.output.find("up to date") != std::string::npos);
    CHECK(run.error_output.find("pybox setup: ") == std::string::npos);
}

TEST_CASE("An engine that is not running is reported clearly and nothing is created")
{
    const std::filesystem::path home = runtime_home().string() + "-dead-engine";
    std::filesystem::remove_all(home);
    std::filesystem::create_directories(home);
    REQUIRE(write_file_atomic(home / "config.json", R"({"engine_socket": "/nonexistent/engine/docker.sock"})").has_value());
    auto daemon = spawn_detached({"/usr/bin/env", "PYBOX_HOME=" + home.string(), pybox::test::daemon_path()}, home / "pyboxd.log");
    REQUIRE(daemon.has_value());
    for (int i = 0; i < 100 && !std::filesystem::exists(home / "pyboxd.sock"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto run = run_pybox({"exec", "-"}, "print(1)\n", {{"PYBOX_HOME", home.string()}});
    send_signal(*daemon, k_signal_terminate);
    for (int i = 0; i < 100 && process_alive(*daemon); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    INFO("stderr: " << run.error_output);
    CHECK(run.exit_code == 125);
    CHECK(run.error_output.find("engine") != std::string::npos);
}

TEST_CASE("vm start after the engine was killed recovers, and runs work again")
{
    auto pid_text = read_file_capped(runtime_home() / "engine" / "dockerd.pid", 64);
    REQUIRE(pid_text.has_value());
    const int dockerd = std::stoi(*pid_text);
    REQUIRE(send_signal(dockerd, k_signal_kill));
    for (int i = 0; i < 100 && process_alive(dockerd); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE_FALSE(process_alive(dockerd));
    CHECK(run_pybox({"vm", "status"}).exit_code == 1);

    const auto started = run_pybox({"vm", "start"});
    INFO(started.output << started.error_output);
    CHECK(started.exit_code == 0);
    CHECK(started.output == "Running and verified.\n");
    const auto run = run_pybox({"exec", "-"}, "print('after recovery')\n");
    CHECK(run.exit_code == 0);
    CHECK(run.output == "after recovery\n");
}

TEST_CASE("A user who is not root is told how to use an engine without the private one")
{
    // Under the system's temp folder: the build folder's parents may be closed to other users.
    const auto home = std::filesystem::temp_directory_path() / "pybox-test-nobody-home";
    std::filesystem::remove_all(home);
    std::filesystem::create_directories(home);
    REQUIRE(run_process({"/usr/bin/chown", "65534:65534", home.string()})->exit_code == 0);
    const std::vector<std::string> as_nobody{"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                             "/usr/bin/env", "PYBOX_HOME=" + home.string()};
    auto daemon_argv = as_nobody;
    daemon_argv.push_back(pybox::test::daemon_path());
    auto daemon = spawn_detached(daemon_argv, runtime_home() / "nobody-pyboxd.log");
    REQUIRE(daemon.has_value());
    for (int i = 0; i < 100 && !std::filesystem::exists(home / "pyboxd.sock"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto client_argv = as_nobody;
    client_argv.insert(client_argv.end(), {pybox::test::client_path(), "vm", "start"});
    ProcessOptions options;
    options.separate_stderr = true;
    const auto run = run_process(client_argv, options);
    send_signal(*daemon, k_signal_terminate);
    for (int i = 0; i < 100 && process_alive(*daemon); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto started = finished_within(client_argv, options.timeout, run);
    INFO(started.output << started.error_output);
    CHECK(started.exit_code == 125);
    CHECK(started.error_output.find("root") != std::string::npos);
    CHECK(started.error_output.find("engine_socket") != std::string::npos);
    std::error_code ignored;
    std::filesystem::remove_all(home, ignored);
}

TEST_CASE("vm start refuses a dockerd in a folder its group may write: the message names the path and why, and nothing is made")
{
    // Under /var/lib, whose folders up to / are root's and 0755 (the temp folder is writable by
    // all, which would be refused first); the copy is a link to the real dockerd, so only the
    // folder it sits in is wrong.
    const std::filesystem::path untrusted = "/var/lib/pybox-test-untrusted-" + std::to_string(current_pid());
    const auto bin = untrusted / "bin";
    std::filesystem::remove_all(untrusted);
    std::filesystem::create_directories(bin);
    std::filesystem::permissions(untrusted, std::filesystem::perms(0755));
    std::filesystem::permissions(bin, std::filesystem::perms(0775));
    std::filesystem::create_symlink("/usr/sbin/dockerd", bin / "dockerd");

    const std::filesystem::path home = runtime_home().string() + "-untrusted-dockerd";
    std::filesystem::remove_all(home);
    std::filesystem::create_directories(home);
    REQUIRE(write_file_atomic(home / "config.json", "{\"dockerd\": \"" + (bin / "dockerd").string() + "\"}\n").has_value());
    auto daemon = spawn_detached({"/usr/bin/env", "PYBOX_HOME=" + home.string(), pybox::test::daemon_path()}, home / "pyboxd.log");
    REQUIRE(daemon.has_value());
    for (int i = 0; i < 100 && !std::filesystem::exists(home / "pyboxd.sock"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto run = run_pybox({"vm", "start"}, "", {{"PYBOX_HOME", home.string()}});
    send_signal(*daemon, k_signal_terminate);
    for (int i = 0; i < 100 && process_alive(*daemon); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    INFO(run.output << run.error_output);
    CHECK(run.exit_code == 125);
    CHECK(run.error_output.find("pybox: PyBox does not run " + (bin / "dockerd").string() + ": the folder " + bin.string() +
                   " is writable by group or others (mode 0775).") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(home / "engine" / "dockerd.pid"));
    std::error_code ignored;
    std::filesystem::remove_all(home, ignored);
    std::filesystem::remove_all(untrusted, ignored);
}

// docs/hostile.md case 40, and a daemon restart finding what an earlier one left behind.
TEST_CASE("A restarted daemon removes its own expired boxes and never touches foreign or unlabelled ones")
{
    auto installation = read_file_capped(runtime_home() / "installation.json", 4096);
    REQUIRE(installation.has_value());
    const std::string owner(json::parse(*installation).at("installation_id").as_string());
    auto images = read_file_capped(runtime_home() / "images.json", 64 * 1024);
    REQUIRE(images.has_value());
    const std::string image(json::parse(*images).at("images").at(0).at("image_id").as_string());
    const std::string expired = "--label=pybox.expires=1000000000";
    const auto own = docker_ok({"create", "--label=pybox.owner=" + owner, "--label=pybox.run=leftover", expired, image, "true"});
    const auto foreign = docker_ok({"create", "--label=pybox.owner=ffffffffffffffffffffffffffffffff",
                                 "--label=pybox.run=foreign", expired, image, "true"});
    const auto unlabelled = docker_ok({"create", image, "true"});

    const int old_daemon = daemon_pid();
    REQUIRE(send_signal(old_daemon, k_signal_terminate));
    for (int i = 0; i < 100 && process_alive(old_daemon); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE_FALSE(process_alive(old_daemon));
    auto daemon = spawn_detached({"/usr/bin/env", "PYBOX_HOME=" + runtime_home().string(), pybox::test::daemon_path()},
                                 runtime_home() / "pyboxd.log");
    REQUIRE(daemon.has_value());
    for (int i = 0; i < 100 && box_exists(own); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));

    CHECK_FALSE(box_exists(own));
    CHECK(box_exists(foreign));
    CHECK(box_exists(unlabelled));
    docker_ok({"rm", "-f", foreign, unlabelled});
    CHECK(run_pybox({"exec", "-"}, "print('after restart')\n").output == "after restart\n");
}

TEST_CASE("Several clients at once each get their own receipt")
{
    std::vector<std::thread> clients;
    std::vector<Expected<ProcessResult>> results(3, make_error("not_run", "not run"));
    for (std::size_t i = 0; i < results.size(); ++i)
        clients.emplace_back([&results, i] {
            results[i] = try_run_pybox({"exec", "-"}, "print(" + std::to_string(i) + " * 1000)\n");
        });
    for (auto& client : clients) client.join();
    for (std::size_t i = 0; i < results.size(); ++i) {
        REQUIRE(results[i].has_value());
        CHECK(results[i]->exit_code == 0);
        CHECK(results[i]->output == std::to_string(i * 1000) + "\n");
    }
}

// Tagged [final]: ctest runs it as its own test after every other integration test.
TEST_CASE("No box with this installation's label is left after the suite", "[final]")
{
    CHECK(labelled_boxes().empty());
}
