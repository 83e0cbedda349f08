#include "proto/box_policy.hpp"

#include <catch2/catch.hpp>

using namespace pybox::proto;

TEST_CASE("The stdlib policy matches the reference table")
{
    const auto policy = policy_for_image("stdlib");
    REQUIRE(policy);
    CHECK(policy->memory_bytes == 128 * 1024 * 1024);
    CHECK(policy->pids == 32);
    CHECK(policy->nano_cpus == 500'000'000);
    CHECK(policy->cpu_cores() == 0.5);
    CHECK(policy->tmpfs_bytes == 16 * 1024 * 1024);
}

TEST_CASE("The data policy matches the reference table")
{
    const auto policy = policy_for_image("data");
    REQUIRE(policy);
    CHECK(policy->memory_bytes == 512 * 1024 * 1024);
    CHECK(policy->pids == 64);
    CHECK(policy->nano_cpus == 1'000'000'000);
    CHECK(policy->cpu_cores() == 1.0);
}

TEST_CASE("Both policies share the same lock-down settings")
{
    for (const auto& image : known_images()) {
        const auto policy = policy_for_image(image);
        REQUIRE(policy);
        CHECK(policy->user == "10000:10000");
        CHECK(policy->readonly_root);
        CHECK(policy->network == "none");
        CHECK(policy->open_files == 128);
        CHECK(policy->log_driver == "none");
        CHECK(policy->no_new_privileges);
        CHECK(policy->capabilities_dropped == "ALL");
        CHECK(policy->seccomp == "default");
        CHECK(policy->tmpfs_path == "/tmp");
    }
}

TEST_CASE("Only stdlib and data are known images")
{
    CHECK(known_images() == std::vector<std::string>{"stdlib", "data"});
    CHECK_FALSE(policy_for_image("python:3.12"));
    CHECK_FALSE(policy_for_image(""));
    CHECK_FALSE(policy_for_image("STDLIB"));
}

TEST_CASE("The tmpfs option string gives the size in bytes and the hardening flags")
{
    CHECK(policy_for_image("stdlib")->tmpfs_mount_options() == "size=16777216,noexec,nodev,nosuid");
}

TEST_CASE("The box command carries a timer one second past the deadline")
{
    CHECK(box_command(2.0) ==
          std::vector<std::string>{"timeout", "-s", "KILL", "3", "python3", "-I", "-B", "-u", "-"});
    CHECK(box_command(0.5)[3] == "1.5");
    CHECK(box_command(0.1)[3] == "1.1");
    CHECK(box_command(30.0)[3] == "31");
}
