// What the unit tests of the apiserver client and of what is built on it share: a kubeconfig's
// access to a ScriptedModelServer (its CA, a token), and one coroutine run to its end. Header-only,
// tests only.
#pragma once

#include "common/error.hpp"
#include "daemon/kube/kubeconfig.hpp"
#include "tests/support/scripted_model_server.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace pybox::test {

inline std::string pem_text(const std::filesystem::path& file)
{
    std::ostringstream text;
    text << std::ifstream(file).rdbuf();
    return text.str();
}

inline kube::KubeAccess access_to(unsigned short port, const std::string& host = "127.0.0.1")
{
    kube::KubeAccess access;
    access.context = "ctx";
    access.cluster = "test";
    access.user = "u";
    access.server = kube::parse_api_server("https://" + host + ":" + std::to_string(port), "server").value();
    access.ca_pem = pem_text(TestPki::get().ca());
    access.token = "t0k3n";
    return access;
}

template <class T>
Expected<T> run_kube(boost::asio::awaitable<Expected<T>> call)
{
    boost::asio::io_context io;
    std::optional<Expected<T>> result;
    boost::asio::co_spawn(
        io, [&]() -> boost::asio::awaitable<void> { result = co_await std::move(call); }, boost::asio::detached);
    io.run();
    REQUIRE(result.has_value());
    return std::move(*result);
}

}  // namespace pybox::test
