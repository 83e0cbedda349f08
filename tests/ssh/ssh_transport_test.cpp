// The ssh engine transport against a real OpenSSH sshd (fixture ssh, tests/integration/ssh_up.sh)
// in front of a real second dockerd (fixture engine2). Every case reads the fixture's ssh.env.
#include "daemon/engine/docker_box_engine.hpp"
#include "daemon/engine/engine_client.hpp"
#include "daemon/engine/ssh_dialer.hpp"
#include "daemon/engine/ssh_session.hpp"
#include "tests/support/engine_frames.hpp"

#include "tests/ssh/ssh_fixture.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <fstream>
#include <thread>

using namespace pybox;
using namespace pybox::engine;
using namespace pybox::test;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

// A container of the tiny image running `script` with stdin open.
json::object box_spec(const std::string& script)
{
    return json::parse(R"({"Image": ")" + std::string(k_tiny_image) +
                       R"(", "Cmd": ["/bin/sh", "-c", ")" + script +
                       R"("], "OpenStdin": true, "StdinOnce": true, "AttachStdin": true, "AttachStdout": true,
                          "AttachStderr": true, "Labels": {"pybox.test": "ssh"},
                          "HostConfig": {"NetworkMode": "none"}})")
        .as_object();
}

// The fixture and a client of its remote engine through one held session (the ssh dialer's);
// `adjust` edits the engine as config.json names it.
struct OverSsh {
    explicit OverSsh(const std::function<void(SshEngine&, const Fixture&)>& adjust = {}, SshTimings timings = {})
        : session(std::make_shared<SshSession>(engine_of(fixture, adjust), timings))
    {
    }

    static SshEngine engine_of(const Fixture& fixture, const std::function<void(SshEngine&, const Fixture&)>& adjust)
    {
        auto engine = fixture.engine();
        if (adjust) adjust(engine, fixture);
        return engine;
    }

    // Declared in this order so the session (whose thread posts to io) ends before io does.
    Fixture fixture;
    net::io_context io;
    std::shared_ptr<SshSession> session;
    EngineClient client{io.get_executor(), make_ssh_dialer(io.get_executor(), session)};
};

// Starts a box that runs until it is killed (`read` waits on the open stdin that nobody writes)
// and registers the wait for its exit; `id` names the box.
net::awaitable<std::unique_ptr<WaitHandle>> start_waiting_box(EngineClient& client, const Fixture& fixture,
                                                              std::string& id)
{
    co_await load_tiny_image(client, fixture);
    auto created = co_await client.create_container(box_spec("read line"), "", k_call);
    REQUIRE(created.has_value());
    id = created->id;
    REQUIRE((co_await client.start_container(id, k_call)).has_value());
    auto waiting = co_await client.begin_wait(id, k_call);
    REQUIRE(waiting.has_value());
    co_return std::move(*waiting);
}

// Connects a session to `engine` (the async path the daemon uses), as the daemon's first call would.
Expected<void> connect_session(const SshEngine& engine)
{
    // The io_context first, so that it outlives the session: the session's thread may still
    // drop a hand-off bound to its executor until the session is destroyed (ASan found this).
    net::io_context io;
    SshSession session(engine);
    Expected<void> ready = make_error("not_run", "not run");
    run(io, [&]() -> net::awaitable<void> { ready = co_await session.ready(io.get_executor(), k_call); });
    return ready;
}

}  // namespace

TEST_CASE("Ping and info reach the remote engine through the ssh dialer")
{
    OverSsh ssh;
    auto& [fixture, io, session, client] = ssh;
    run(io, [&]() -> net::awaitable<void> {
        auto ping = co_await client.ping(k_call);
        REQUIRE(ping.has_value());
        CHECK(ping->os_type == "linux");
        auto info = co_await client.info(k_call);
        REQUIRE(info.has_value());
        CHECK(info->data_root.rfind(fixture.engine2_dir(), 0) == 0);
    });
    CHECK(session->connects() == 1);
    CHECK_THAT(client.dialer().describe(), Catch::Contains("ssh://root@127.0.0.1:" + fixture.port()));
}

TEST_CASE("A known_hosts file pins the host key as well as a fingerprint")
{
    OverSsh ssh([](SshEngine& engine, const Fixture& fixture) {
        engine.host_key_sha256.reset();
        engine.known_hosts = fixture.value("KNOWN_HOSTS");
    });
    auto& [fixture, io, session, client] = ssh;
    run(io, [&]() -> net::awaitable<void> {
        auto ping = co_await client.ping(k_call);
        CHECK(ping.has_value());
    });
}

TEST_CASE("A container is created, attached, started, waited for and removed over ssh")
{
    OverSsh ssh;
    auto& [fixture, io, session, client] = ssh;
    run(io, [&]() -> net::awaitable<void> {
        REQUIRE((co_await client.ping(k_call)).has_value());
        co_await load_tiny_image(client, fixture);
        auto created = co_await client.create_container(box_spec("read line; echo got $line; echo err >&2; exit 3"),
                                                        "", k_call);
        REQUIRE(created.has_value());
        auto attached = co_await client.attach(created->id, k_call);
        REQUIRE(attached.has_value());
        auto waiting = co_await client.begin_wait(created->id, k_call);
        REQUIRE(waiting.has_value());
        REQUIRE((co_await client.start_container(created->id, k_call)).has_value());
        auto streams = docker_box_streams(std::move(*attached));
        REQUIRE((co_await streams->write_stdin("over ssh\n", k_call)).has_value());
        REQUIRE(streams->close_stdin().has_value());
        pybox::test::JoinedOutput output;
        for (;;) {
            auto chunks = co_await streams->read_output();
            REQUIRE(chunks.has_value());
            if (chunks->empty()) break;
            pybox::test::join_into(output, *chunks);
        }
        CHECK_FALSE(streams->malformed());
        CHECK(output.out == "got over ssh\n");
        CHECK(output.err == "err\n");
        auto result = co_await (*waiting)->result(k_call);
        REQUIRE(result.has_value());
        CHECK(result->status_code == 3);
        REQUIRE((co_await client.remove_container(created->id, k_call)).has_value());
        auto gone = co_await client.inspect_container(created->id, k_call);
        REQUIRE_FALSE(gone.has_value());
        CHECK(gone.error().code == "engine_no_such_object");
    });
    CHECK(session->connects() == 1);
}

TEST_CASE("Sequential Engine API calls over ssh share one kept channel")
{
    OverSsh ssh;
    auto& [fixture, io, session, client] = ssh;
    run(io, [&]() -> net::awaitable<void> {
        REQUIRE((co_await client.ping(k_call)).has_value());
        for (int i = 0; i < 20; ++i) {
            auto info = co_await client.info(k_call);
            REQUIRE(info.has_value());
        }
    });
    // The first call's channel (the spare, handed out) and the spare opened after it; not one per call.
    CHECK(session->channels_opened() <= 3);
    CHECK(session->connects() == 1);
}

TEST_CASE("Twenty sequential and eight concurrent requests share one ssh session")
{
    OverSsh ssh;
    auto& [fixture, io, session, client] = ssh;
    run(io, [&]() -> net::awaitable<void> {
        for (int i = 0; i < 20; ++i) {
            auto ping = co_await client.ping(k_call);
            REQUIRE(ping.has_value());
        }
    });
    int answered = 0;
    for (int i = 0; i < 8; ++i)
        net::co_spawn(io, [&]() -> net::awaitable<void> {
            auto info = co_await client.info(k_call);
            if (info.has_value()) ++answered;
        }, net::detached);
    io.restart();
    io.run();
    CHECK(answered == 8);
    CHECK(session->connects() == 1);
}

TEST_CASE("A wrong pinned host key is refused before authenticating, showing the key seen")
{
    OverSsh ssh([](SshEngine& engine, const Fixture&) { engine.host_key_sha256 = "SHA256:" + std::string(43, 'A'); });
    auto& [fixture, io, session, client] = ssh;
    const auto log_before = fixture.sshd_log().size();
    run(io, [&]() -> net::awaitable<void> {
        auto ping = co_await client.ping(k_call);
        REQUIRE_FALSE(ping.has_value());
        CHECK(ping.error().code == "engine_host_key_refused");
        CHECK_THAT(ping.error().message, Catch::Contains(fixture.value("HOST_KEY")));
        CHECK_THAT(ping.error().message, Catch::Contains("127.0.0.1:" + fixture.port()));
        CHECK_THAT(ping.error().message, Catch::Contains("\"host_key\""));
        // While it waits to try again, the refusal keeps its code.
        auto again = co_await client.ping(k_call);
        REQUIRE_FALSE(again.has_value());
        CHECK(again.error().code == "engine_host_key_refused");
        CHECK_THAT(again.error().message, Catch::Contains("again in"));
    });
    // sshd saw a connection and no authentication attempt at all.
    std::this_thread::sleep_for(200ms);
    const auto log = fixture.sshd_log().substr(log_before);
    CHECK_THAT(log, Catch::Contains("Connection from 127.0.0.1"));
    CHECK_THAT(log, !Catch::Contains("publickey"));
    CHECK_THAT(log, !Catch::Contains("Accepted"));
    CHECK_THAT(log, !Catch::Contains("Failed"));
}

TEST_CASE("A host key missing from the known_hosts file is refused, naming [host]:port")
{
    Fixture fixture;
    auto engine = fixture.engine();
    engine.host_key_sha256.reset();
    const auto empty = std::filesystem::path(fixture.dir()) / "empty_known_hosts";
    std::ofstream(empty).close();
    engine.known_hosts = empty;
    auto result = connect_session(engine);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == "engine_host_key_refused");
    CHECK_THAT(result.error().message, Catch::Contains("[127.0.0.1]:" + fixture.port()));
    CHECK_THAT(result.error().message, Catch::Contains(fixture.value("HOST_KEY")));
}

TEST_CASE("A key the host does not accept is refused with engine_auth_refused")
{
    Fixture fixture;
    auto engine = fixture.engine();
    engine.identity_file = fixture.value("OTHER_KEY");
    auto result = connect_session(engine);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == "engine_auth_refused");
    CHECK_THAT(result.error().message, Catch::Contains("other_ed25519"));
}

TEST_CASE("An identity file that others may read is not offered")
{
    Fixture fixture;
    auto engine = fixture.engine();
    const auto open_key = std::filesystem::path(fixture.dir()) / "open_key";
    std::filesystem::copy_file(fixture.value("USER_KEY"), open_key, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::permissions(open_key, std::filesystem::perms(0644));
    engine.identity_file = open_key;
    const auto log_before = fixture.sshd_log().size();
    auto result = connect_session(engine);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == "engine_auth_refused");
    CHECK_THAT(result.error().message, Catch::Contains("mode 0644") && Catch::Contains("chmod 600"));
    // It never connected (earlier cases' sessions may still log their ends meanwhile).
    std::this_thread::sleep_for(200ms);
    CHECK_THAT(fixture.sshd_log().substr(log_before), !Catch::Contains("Connection from"));
}

TEST_CASE("A remote command's stdout comes back through its stream, its stderr is dropped, and its end ends the stream")
{
    Fixture fixture;
    net::io_context io;  // outlives the session (connect_session says why)
    SshSession session(fixture.engine());
    std::string output;
    run(io, [&]() -> net::awaitable<void> {
        auto stream = co_await session.open_stream(io.get_executor(), "cat; echo out; echo err >&2; exit 7", k_call);
        REQUIRE(stream.has_value());
        co_await net::async_write(*stream, net::buffer(std::string("in\n")), net::use_awaitable);
        stream->shutdown(Stream::shutdown_send);
        for (;;) {
            char buffer[256];
            auto [ec, got] = co_await stream->async_read_some(net::buffer(buffer), net::as_tuple(net::use_awaitable));
            output.append(buffer, got);
            if (ec) break;
        }
    });
    CHECK(output == "in\nout\n");
}

TEST_CASE("An idle session whose sshd was restarted is connected again by the next call")
{
    OverSsh ssh;
    auto& [fixture, io, session, client] = ssh;
    run(io, [&]() -> net::awaitable<void> {
        REQUIRE((co_await client.ping(k_call)).has_value());
        fixture.kill_sshd();
        fixture.restart_sshd();
        auto again = co_await client.ping(k_call);
        INFO((again ? std::string() : again.error().message));
        REQUIRE(again.has_value());
    });
    CHECK(session->connects() == 2);
}

TEST_CASE("A host that stops answering is dropped after the keep-alives go unanswered")
{
    SshTimings quick;
    quick.keepalive_interval = std::chrono::seconds(1);
    quick.keepalive_missed = 2;
    OverSsh ssh({}, quick);
    auto& [fixture, io, session, client] = ssh;
    std::string id;
    run(io, [&]() -> net::awaitable<void> {
        auto waiting = co_await start_waiting_box(client, fixture, id);
        fixture.signal_sshd("STOP");
        const auto frozen_at = std::chrono::steady_clock::now();
        auto result = co_await waiting->result(Timeout(60'000));
        const auto took = std::chrono::steady_clock::now() - frozen_at;
        fixture.signal_sshd("CONT");
        REQUIRE_FALSE(result.has_value());
        CHECK(took >= 1s);
        CHECK(took < 6s);
        REQUIRE(session->last_drop().has_value());
        CHECK_THAT(*session->last_drop(), Catch::Contains("sent nothing for 2 s"));
        auto back = co_await client.ping(k_call);
        REQUIRE(back.has_value());
        REQUIRE((co_await client.remove_container(id, k_call)).has_value());
    });
    CHECK(session->connects() == 2);
}

TEST_CASE("sshd killed mid-request fails the call within seconds, and a restarted sshd is reached again")
{
    OverSsh ssh;
    auto& [fixture, io, session, client] = ssh;
    std::string id;
    run(io, [&]() -> net::awaitable<void> {
        REQUIRE((co_await client.ping(k_call)).has_value());
        auto waiting = co_await start_waiting_box(client, fixture, id);
        net::steady_timer pause(co_await net::this_coro::executor, 300ms);
        co_await pause.async_wait(net::use_awaitable);
        const auto killed_at = std::chrono::steady_clock::now();
        fixture.kill_sshd();
        auto result = co_await waiting->result(Timeout(120'000));
        const auto took = std::chrono::steady_clock::now() - killed_at;
        REQUIRE_FALSE(result.has_value());
        CHECK(took < 5s);
        INFO(result.error().code << ": " << result.error().message);
        REQUIRE(session->last_drop().has_value());
        CHECK_THAT(*session->last_drop(), Catch::Contains("127.0.0.1:" + fixture.port()) && Catch::Contains("dropped"));
        // Down: the first dial tries at once and fails; the next fails fast, saying when it retries.
        auto refused = co_await client.ping(k_call);
        REQUIRE_FALSE(refused.has_value());
        CHECK(refused.error().code == "engine_unreachable");
        auto fast = co_await client.ping(k_call);
        REQUIRE_FALSE(fast.has_value());
        CHECK(fast.error().code == "engine_unreachable");
        CHECK_THAT(fast.error().message, Catch::Contains("127.0.0.1:" + fixture.port()) && Catch::Contains("again in"));
        fixture.restart_sshd();
        pause.expires_after(1100ms);
        co_await pause.async_wait(net::use_awaitable);
        auto back = co_await client.ping(k_call);
        REQUIRE(back.has_value());
        REQUIRE((co_await client.remove_container(id, k_call)).has_value());
    });
    CHECK(session->connects() == 2);
}
