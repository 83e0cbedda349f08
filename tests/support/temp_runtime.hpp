// A private runtime folder of its own per test (RuntimePaths), removed at the end.
#pragma once

#include "common/paths.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

namespace pybox::test {

struct TempRuntime {
    std::filesystem::path root =
        std::filesystem::temp_directory_path() /
        ("pybox-unit-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "-" +
         std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    RuntimePaths paths{root};
    TempRuntime() { REQUIRE(paths.ensure_private().has_value()); }
    ~TempRuntime() { std::filesystem::remove_all(root); }
    TempRuntime(const TempRuntime&) = delete;
    TempRuntime& operator=(const TempRuntime&) = delete;
};

// A macOS user's runtime folder, for tests of what is derived from its paths (nothing is made).
inline const RuntimePaths k_mac_user_paths{"/Users/ada/.pybox/runtime"};

}  // namespace pybox::test
