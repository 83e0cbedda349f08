#include "tests/support/cluster_env.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

namespace pybox::test {

namespace {

const std::map<std::string, std::string>& cluster_values()
{
    static const std::map<std::string, std::string> values = [] {
        const char* home = std::getenv("PYBOX_K8S_HOME");
        const std::filesystem::path file = std::filesystem::path(home ? home : "/tmp/pybox-k8s") / "cluster.env";
        std::ifstream in(file);
        INFO("the test cluster's " << file << " (tests/k8s/cluster_up.sh writes it)");
        REQUIRE(in.good());
        std::map<std::string, std::string> read;
        for (std::string line; std::getline(in, line);) {
            const auto equals = line.find('=');
            if (equals != std::string::npos) read[line.substr(0, equals)] = line.substr(equals + 1);
        }
        return read;
    }();
    return values;
}

}  // namespace

const std::string& cluster_env(const std::string& key)
{
    const auto found = cluster_values().find(key);
    INFO(key << " in cluster.env");
    REQUIRE(found != cluster_values().end());
    return found->second;
}

}  // namespace pybox::test
