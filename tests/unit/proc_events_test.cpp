#include "daemon/watcher/process_end_log.hpp"
#include "daemon/watcher/proc_events.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

using namespace pybox::watcher;

namespace {

// One netlink message of the proc connector carrying a proc_event: `what` and four u32 fields.
std::vector<std::byte> message(std::uint32_t what, std::uint64_t mono_ns, std::uint32_t a, std::uint32_t b,
                               std::uint32_t c, std::uint32_t d, std::uint32_t connector_index = 1)
{
    constexpr std::size_t k_event = 16 + 16;
    constexpr std::size_t k_total = 16 + 20 + k_event;
    std::vector<std::byte> bytes(k_total);
    const auto put = [&](std::size_t offset, auto value) { std::memcpy(bytes.data() + offset, &value, sizeof value); };
    put(0, static_cast<std::uint32_t>(k_total));
    put(4, static_cast<std::uint16_t>(3));
    put(16, connector_index);
    put(20, std::uint32_t{1});
    put(32, static_cast<std::uint16_t>(k_event));
    put(36, what);
    put(44, mono_ns);
    put(52, a);
    put(56, b);
    put(60, c);
    put(64, d);
    return bytes;
}

std::vector<std::byte> joined(std::vector<std::byte> first, const std::vector<std::byte>& second)
{
    first.insert(first.end(), second.begin(), second.end());
    return first;
}

constexpr std::uint32_t k_fork = 0x1;
constexpr std::uint32_t k_exit = 0x80000000;

}  // namespace

TEST_CASE("A process's fork and its leader's exit are read with their kernel times and wait status")
{
    const auto bytes = joined(message(k_fork, 10, 100, 100, 101, 101), message(k_exit, 20, 101, 101, 0x8900, 17));
    const auto events = parse_proc_events(bytes);
    REQUIRE(events.size() == 2);
    const auto& fork = std::get<ProcFork>(events[0]);
    CHECK(fork.parent == 100);
    CHECK(fork.child == 101);
    CHECK(fork.mono_ns == 10);
    const auto& exit = std::get<ProcExit>(events[1]);
    CHECK(exit.pid == 101);
    CHECK(exit.exited());
    CHECK(exit.exit_code() == 137);
    CHECK(exit.mono_ns == 20);
}

TEST_CASE("A death by signal is told from an exit with a code")
{
    const auto events = parse_proc_events(message(k_exit, 5, 7, 7, 9, 17));
    REQUIRE(events.size() == 1);
    CHECK_FALSE(std::get<ProcExit>(events[0]).exited());
    CHECK(std::get<ProcExit>(events[0]).signal() == 9);
}

TEST_CASE("Threads' forks and exits, other connectors and other events are skipped")
{
    auto bytes = message(k_fork, 1, 100, 100, 102, 101);          // a thread of 101
    bytes = joined(bytes, message(k_exit, 2, 102, 101, 0, 17));   // a thread ends
    bytes = joined(bytes, message(0x2, 3, 1, 1, 1, 1));           // exec
    bytes = joined(bytes, message(k_exit, 4, 9, 9, 0, 17, 7));    // another connector
    CHECK(parse_proc_events(bytes).empty());
}

TEST_CASE("The kernel's answer to the subscription is read with its error")
{
    const auto events = parse_proc_events(message(0, 0, 1, 0, 0, 0));
    REQUIRE(events.size() == 1);
    CHECK(std::get<ProcAck>(events[0]).error == 1);
}

TEST_CASE("A message whose length runs past the datagram ends the parse without reading past it")
{
    auto bytes = joined(message(k_exit, 2, 5, 5, 0, 17), message(k_exit, 3, 6, 6, 0, 17));
    const std::uint32_t too_long = 4096;
    std::memcpy(bytes.data() + 68, &too_long, sizeof too_long);  // the second message's length
    const auto events = parse_proc_events(bytes);
    REQUIRE(events.size() == 1);
    CHECK(std::get<ProcExit>(events[0]).pid == 5);
    CHECK(parse_proc_events(std::span(bytes.data(), 10)).empty());
}

TEST_CASE("The subscription message parses back as a proc connector message")
{
    const auto listen = proc_listen_message(42);
    REQUIRE(listen.size() == 40);
    std::uint32_t length = 0;
    std::memcpy(&length, listen.data(), sizeof length);
    CHECK(length == 40);
    std::uint32_t operation = 0;
    std::memcpy(&operation, listen.data() + 36, sizeof operation);
    CHECK(operation == 1);
}

TEST_CASE("A followed box finds its interpreter and both ends, also from events before it was followed")
{
    ProcessEndLog log;
    log.record(ProcFork{100, 101, 10});
    log.follow(100, 5);
    log.record(ProcExit{101, 0, 30});
    log.record(ProcExit{100, 9, 40});
    const auto ends = log.take(100);
    CHECK(ends.program_pid == 101);
    REQUIRE(ends.program);
    CHECK(ends.program->mono_ns == 30);
    REQUIRE(ends.first);
    CHECK(ends.first->signal() == 9);
    CHECK(log.followed_count() == 0);
}

TEST_CASE("Events from before the box's start are another process's and are not taken")
{
    ProcessEndLog log;
    log.record(ProcFork{100, 99, 1});  // an earlier process with the same pid
    log.record(ProcExit{100, 0, 2});
    log.follow(100, 5);
    log.record(ProcFork{100, 101, 6});
    const auto ends = log.take(100);
    CHECK(ends.program_pid == 101);
    CHECK_FALSE(ends.first);
}

TEST_CASE("Only the first process's first child is its interpreter")
{
    ProcessEndLog log;
    log.follow(100, 0);
    log.record(ProcFork{100, 101, 1});
    log.record(ProcFork{100, 102, 2});
    log.record(ProcExit{102, 0, 3});
    const auto ends = log.take(100);
    CHECK(ends.program_pid == 101);
    CHECK_FALSE(ends.program);
}

TEST_CASE("Lost events mark the boxes followed then, and the recent events stay bounded")
{
    ProcessEndLog log;
    log.follow(100, 0);
    log.lost_events();
    for (std::int64_t pid = 1000; pid < 1000 + 2 * static_cast<std::int64_t>(ProcessEndLog::k_recent_events); ++pid)
        log.record(ProcExit{pid, 0, pid});
    CHECK(log.take(100).events_lost);
    log.follow(1000, 0);  // its exit has left the recent events
    CHECK_FALSE(log.take(1000).first);
    CHECK(log.take(12345).program_pid == std::nullopt);
}

TEST_CASE("Taking a box catches up with the kernel first and says when no box is followed any more")
{
    ProcessEndLog log;
    int catch_ups = 0;
    int idles = 0;
    log.set_feeder([&] { ++catch_ups; }, [&] { ++idles; });
    log.follow(100, 0);
    log.follow(200, 0);
    (void)log.take(100);
    CHECK(catch_ups == 1);
    CHECK(idles == 0);
    (void)log.take(200);
    CHECK(catch_ups == 2);
    CHECK(idles == 1);
}
