// Benchmark of the ssh engine transport against the local unix socket, on the ssh and engine2
// fixtures: a hidden test case ([.bench], never run by ctest); tests/bench/engine_ssh_vs_local.sh
// starts the fixtures and runs it. PYBOX_BENCH_ROUNDS sets the rounds (default 20).
// Interleaved rounds; prints the median and minimum of each measure in milliseconds:
//   connect      a new SshSession: TCP, handshake, host key check, public-key auth
//   channel      a new exec channel on the held session (open + exec + first byte back)
//   ping         GET /_ping over ssh and over the unix socket, each on its kept connection
//   run          create, start, wait for and remove a box running `true` (the tiny image)
#include "daemon/engine/engine_client.hpp"
#include "daemon/engine/ssh_dialer.hpp"
#include "daemon/engine/ssh_session.hpp"

#include "tests/ssh/ssh_fixture.hpp"

#include <boost/asio/read.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

using namespace pybox;
using namespace pybox::engine;
using Clock = std::chrono::steady_clock;

namespace {

constexpr Timeout k_bench_call{20'000};

double ms_since(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

net::awaitable<void> one_run(EngineClient& client, std::vector<double>& times)
{
    const auto start = Clock::now();
    auto spec = boost::json::parse(R"({"Image": ")" + std::string(test::k_tiny_image) +
                                   R"(", "Cmd": ["/bin/sh", "-c", "true"], "HostConfig": {"NetworkMode": "none"}})")
                    .as_object();
    auto created = co_await client.create_container(spec, "", k_bench_call);
    if (!created) throw ErrorException(created.error());
    auto waiting = co_await client.begin_wait(created->id, k_bench_call);
    if (!waiting) throw ErrorException(waiting.error());
    auto started = co_await client.start_container(created->id, k_bench_call);
    if (!started) throw ErrorException(started.error());
    auto exited = co_await (*waiting)->result(k_bench_call);
    if (!exited) throw ErrorException(exited.error());
    auto removed = co_await client.remove_container(created->id, k_bench_call);
    if (!removed) throw ErrorException(removed.error());
    times.push_back(ms_since(start));
}

}  // namespace

TEST_CASE("Benchmark: the ssh transport against the unix socket", "[.bench]")
{
    const char* rounds_text = std::getenv("PYBOX_BENCH_ROUNDS");
    const int rounds = rounds_text != nullptr ? std::stoi(rounds_text) : 20;
    test::Fixture fixture;
    net::io_context io;
    auto session = std::make_shared<SshSession>(fixture.engine());
    EngineClient ssh(io.get_executor(), make_ssh_dialer(io.get_executor(), session));
    EngineClient unix_socket(io.get_executor(), make_unix_socket_dialer(io.get_executor(), fixture.value("ENGINE_SOCKET")));
    std::map<std::string, std::vector<double>> times;
    test::run(io, [&]() -> net::awaitable<void> {
        if (!(co_await ssh.ping(k_bench_call))) throw std::runtime_error("no ping over ssh");
        if (!(co_await unix_socket.ping(k_bench_call))) throw std::runtime_error("no ping over the unix socket");
        co_await test::load_tiny_image(ssh, fixture);
        for (int round = 0; round < rounds; ++round) {
            {
                const auto start = Clock::now();
                SshSession fresh(fixture.engine());
                auto ready = co_await fresh.ready(co_await net::this_coro::executor, k_bench_call);
                if (!ready) throw ErrorException(ready.error());
                times["connect+hostkey+auth"].push_back(ms_since(start));
            }
            {
                const auto start = Clock::now();
                auto stream = co_await session->open_stream(co_await net::this_coro::executor, "echo x", k_bench_call);
                if (!stream) throw ErrorException(stream.error());
                char byte;
                co_await net::async_read(*stream, net::buffer(&byte, 1), net::use_awaitable);
                times["exec channel (open+exec+first byte)"].push_back(ms_since(start));
            }
            for (auto* client : {&ssh, &unix_socket}) {
                const auto start = Clock::now();
                if (!(co_await client->ping(k_bench_call))) throw std::runtime_error("ping failed");
                times[client == &ssh ? "/_ping over ssh" : "/_ping over unix socket"].push_back(ms_since(start));
            }
            co_await one_run(ssh, times["box run over ssh"]);
            co_await one_run(unix_socket, times["box run over unix socket"]);
        }
    });
    std::printf("%-40s %10s %10s  (%d interleaved rounds, ms)\n", "measure", "median", "min", rounds);
    std::map<std::string, double> medians;
    for (auto& [name, values] : times) {
        std::sort(values.begin(), values.end());
        medians[name] = values[values.size() / 2];
        std::printf("%-40s %10.2f %10.2f\n", name.c_str(), medians[name], values.front());
    }
    std::printf("ratio ssh/unix: /_ping %.2f, box run %.3f\n", medians["/_ping over ssh"] / medians["/_ping over unix socket"],
                medians["box run over ssh"] / medians["box run over unix socket"]);
}
