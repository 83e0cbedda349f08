// A box-like environment on the host, for tests of a box's first process without an engine:
// PID 1 of a PID namespace of its own (so, as in a box, signals from inside reach PID 1 only
// where it has a handler, kill(-1) reaches only the namespace's processes, and when PID 1 ends
// the kernel ends every other process there), with a box's environment, and the host's sh,
// perl, coreutils and python3 (Debian 12's, as in the images).
#pragma once

#include "common/process.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace pybox::test {

// The prefix that runs a command box-like: root of a user namespace of its own, PID 1 of a PID
// namespace of its own, in a box's environment.
inline const std::vector<std::string> k_box_like = {"/usr/bin/unshare", "--user", "--map-root-user", "--pid",
                                                    "--fork", "/usr/bin/env", "-i",
                                                    "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp",
                                                    "HOSTNAME=pybox"};

// `argv` with `input` on stdin (then closed) and stderr kept apart, for at most 20 s.
inline ProcessResult run_with_input(const std::vector<std::string>& argv, const std::string& input)
{
    ProcessOptions options;
    options.input = input;
    options.separate_stderr = true;
    options.timeout = std::chrono::seconds(20);
    auto ran = run_process(argv, options);
    REQUIRE(ran.has_value());
    return *ran;
}

// `argv` box-like (k_box_like) with `input` on stdin; fails the test unless it exited.
inline ProcessResult run_box_like(std::vector<std::string> argv, const std::string& input)
{
    argv.insert(argv.begin(), k_box_like.begin(), k_box_like.end());
    auto ran = run_with_input(argv, input);
    INFO("stderr: " << ran.error_output);
    REQUIRE(ran.signal == 0);
    return ran;
}

// k_box_like, but as uid and gid 10000 with no capability in its user namespace, as in a box:
// what the program can do to its box's other processes is then what its uid allows.
inline std::vector<std::string> box_like_unprivileged_prefix()
{
    auto prefix = k_box_like;
    const auto root = std::find(prefix.begin(), prefix.end(), "--map-root-user");
    REQUIRE(root != prefix.end());
    *root = "--map-user=10000";
    prefix.insert(root + 1, "--map-group=10000");
    return prefix;
}

// `argv` with box_like_unprivileged_prefix() and `input` on stdin.
inline ProcessResult run_box_like_unprivileged(std::vector<std::string> argv, const std::string& input)
{
    const auto prefix = box_like_unprivileged_prefix();
    argv.insert(argv.begin(), prefix.begin(), prefix.end());
    return run_with_input(argv, input);
}

}  // namespace pybox::test
