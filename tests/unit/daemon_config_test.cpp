#include "daemon/config/daemon_config.hpp"

#include <catch2/catch.hpp>

#include <string>

using pybox::config::parse_daemon_config;

namespace {

const std::filesystem::path k_file = "/home/u/.pybox/runtime/config.json";

std::string rejection(std::string_view text)
{
    auto config = parse_daemon_config(text, k_file);
    REQUIRE_FALSE(config.has_value());
    CHECK(config.error().code == "config_invalid");
    return config.error().message;
}

}  // namespace

TEST_CASE("An empty config object gives the private engine with Debian's dockerd and runc")
{
    auto config = parse_daemon_config("{}", k_file);
    REQUIRE(config.has_value());
    CHECK_FALSE(config->engine_socket);
    CHECK(config->dockerd == "/usr/sbin/dockerd");
    CHECK(config->runtime == "runc");
    CHECK_FALSE(config->recipes_dir);
}

TEST_CASE("Every known key is read")
{
    auto config = parse_daemon_config(R"({"engine_socket": "/run/user/1000/docker.sock",
        "dockerd": "/opt/docker/bin/dockerd", "runtime": "crun", "recipes_dir": "/srv/recipes/"})",
                                      k_file);
    REQUIRE(config.has_value());
    CHECK(config->engine_socket == std::filesystem::path("/run/user/1000/docker.sock"));
    CHECK(config->dockerd == "/opt/docker/bin/dockerd");
    CHECK(config->runtime == "crun");
    CHECK(config->recipes_dir == std::filesystem::path("/srv/recipes/"));
}

TEST_CASE("The client's unsealed_python is accepted when it is an absolute path")
{
    CHECK(parse_daemon_config(R"({"unsealed_python": "/usr/bin/python3"})", k_file).has_value());
}

TEST_CASE("An unknown key is refused and named with the file")
{
    const auto message = rejection(R"({"engine_sockets": "/run/docker.sock"})");
    CHECK_THAT(message, Catch::Contains("\"engine_sockets\"") && Catch::Contains(k_file.string()) &&
                            Catch::Contains("not known"));
}

TEST_CASE("A relative path is refused for each path key")
{
    for (const auto* key : {"engine_socket", "dockerd", "recipes_dir", "image_tar_cache_dir", "unsealed_python"}) {
        const auto message = rejection(std::string("{\"") + key + "\": \"docker.sock\"}");
        CHECK_THAT(message, Catch::Contains(std::string("\"") + key + "\"") && Catch::Contains("absolute"));
    }
}

TEST_CASE("A value of the wrong type is refused")
{
    CHECK_THAT(rejection(R"({"dockerd": 7})"), Catch::Contains("\"dockerd\" must be a string"));
    CHECK_THAT(rejection(R"({"runtime": ["runc"]})"), Catch::Contains("\"runtime\""));
}

TEST_CASE("stdlib_image is a pinned reference, none on Linux unless named; a tag or a bad digest is refused")
{
    CHECK_FALSE(parse_daemon_config("{}", k_file)->stdlib_image);
    const std::string digest = "sha256:" + std::string(64, 'b');
    auto config = parse_daemon_config(R"({"stdlib_image": "127.0.0.1:5000/pybox/stdlib@)" + digest + R"("})", k_file);
    REQUIRE(config.has_value());
    REQUIRE(config->stdlib_image);
    CHECK(config->stdlib_image->text() == "127.0.0.1:5000/pybox/stdlib@" + digest);
    CHECK_THAT(rejection(R"({"stdlib_image": "python:3.11"})"),
               Catch::Contains("\"stdlib_image\" is not a pinned REGISTRY/REPO@sha256:DIGEST: "));
    CHECK_THAT(rejection(R"({"stdlib_image": "python@sha256:abc"})"), Catch::Contains("\"stdlib_image\""));
}

TEST_CASE("A runtime name with shell or path characters is refused")
{
    CHECK_THAT(rejection(R"({"runtime": "../runc"})"), Catch::Contains("\"runtime\""));
    CHECK_THAT(rejection(R"({"runtime": ""})"), Catch::Contains("\"runtime\""));
    CHECK_THAT(rejection(R"({"runtime": "runc; rm -rf /"})"), Catch::Contains("\"runtime\""));
}

TEST_CASE("An engine socket path too long for a unix socket is refused")
{
    const std::string long_path = "/" + std::string(120, 'a');
    CHECK_THAT(rejection("{\"engine_socket\": \"" + long_path + "\"}"), Catch::Contains("longer than"));
}

TEST_CASE("Text that is not one JSON object is refused with the file named")
{
    CHECK_THAT(rejection("[]"), Catch::Contains(k_file.string()));
    CHECK_THAT(rejection("{\"runtime\": \"runc\",}"), Catch::Contains("not valid JSON"));
    CHECK_THAT(rejection(""), Catch::Contains("not valid JSON"));
}

TEST_CASE("A config file over the size cap is refused before parsing")
{
    const std::string big = "{\"runtime\": \"runc\"" + std::string(pybox::config::k_max_config_bytes, ' ') + "}";
    CHECK_THAT(rejection(big), Catch::Contains("larger than"));
}

TEST_CASE("A missing config file yields the defaults and the private engine's socket")
{
    const pybox::RuntimePaths paths("/nonexistent/pybox-config-test");
    auto config = pybox::config::load_daemon_config(paths);
    REQUIRE(config.has_value());
    CHECK(pybox::config::engine_socket_path(*config, paths) == "/nonexistent/pybox-config-test/engine/docker.sock");
}

TEST_CASE("A configured engine socket replaces the private engine's socket")
{
    const pybox::RuntimePaths paths("/home/u/.pybox/runtime");
    pybox::config::DaemonConfig config;
    config.engine_socket = "/run/docker.sock";
    CHECK(pybox::config::engine_socket_path(config, paths) == "/run/docker.sock");
}

TEST_CASE("The kernel watcher is on unless config.json switches it off")
{
    CHECK(parse_daemon_config("{}", k_file)->watcher);
    CHECK_FALSE(parse_daemon_config(R"({"watcher": false})", k_file)->watcher);
    CHECK_THAT(rejection(R"({"watcher": "no"})"), Catch::Contains("\"watcher\""));
    CHECK(parse_daemon_config(R"({"watcher_script": "/srv/watch.sh"})", k_file)->watcher_script ==
          std::filesystem::path("/srv/watch.sh"));
    CHECK_THAT(rejection(R"({"watcher_script": "watch.sh"})"), Catch::Contains("absolute"));
}

TEST_CASE("The sweep's times are read within their ranges and default to 120, 60 and 30 s")
{
    auto defaults = parse_daemon_config("{}", k_file);
    REQUIRE(defaults.has_value());
    CHECK(defaults->box_expiry_s == 120);
    CHECK(defaults->settle_after_expiry_s == 60);
    CHECK(defaults->sweep_interval_s == 30);
    auto shortest = parse_daemon_config(R"({"box_expiry_s": 1, "settle_after_expiry_s": 0, "sweep_interval_s": 1})", k_file);
    REQUIRE(shortest.has_value());
    CHECK(shortest->box_expiry_s == 1);
    CHECK(shortest->settle_after_expiry_s == 0);
    CHECK(shortest->sweep_interval_s == 1);
    auto longest =
        parse_daemon_config(R"({"box_expiry_s": 3600, "settle_after_expiry_s": 3600, "sweep_interval_s": 3600})", k_file);
    REQUIRE(longest.has_value());
    CHECK(longest->box_expiry_s == 3600);

    for (const auto* text : {R"({"box_expiry_s": 0})", R"({"box_expiry_s": 3601})", R"({"settle_after_expiry_s": -1})",
                             R"({"sweep_interval_s": 0})", R"({"sweep_interval_s": 2.5})", R"({"sweep_interval_s": "30"})",
                             R"({"box_expiry_s": 18446744073709551615})"}) {
        INFO(text);
        CHECK_THAT(rejection(text), Catch::Contains("whole number of seconds"));
    }
}

TEST_CASE("warm_boxes is 1 by default and takes a whole number from 0 to 4")
{
    CHECK(parse_daemon_config("{}", k_file)->warm_boxes == 1);
    CHECK(parse_daemon_config(R"({"warm_boxes": 0})", k_file)->warm_boxes == 0);
    CHECK(parse_daemon_config(R"({"warm_boxes": 4})", k_file)->warm_boxes == 4);
    for (const auto* text : {R"({"warm_boxes": 5})", R"({"warm_boxes": -1})", R"({"warm_boxes": 1.5})",
                             R"({"warm_boxes": "1"})", R"({"warm_boxes": true})"})
        CHECK_THAT(rejection(text), Catch::Contains("\"warm_boxes\"") && Catch::Contains("0 to 4"));
}
