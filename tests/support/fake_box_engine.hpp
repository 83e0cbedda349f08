// FakeBoxEngine: a BoxEngine (daemon/engine/box_engine.hpp) holding one scripted box in
// memory, and its EngineProbe (engine_probe.hpp), with fault injection by method, so run/'s
// phases and explanation codes are tested without HTTP bytes or an engine's notation
// (leveldb's FaultInjectionTestEnv).
//
// The box's program (`program`) starts with launch_box() and ends by itself after `runs_for`,
// or at kill_box() when it runs `until_killed`: then its end is reported, the output gives its
// chunks (stdout, then stderr) and ends, and inspect reports the exit. fail(method, code,
// times, skip) makes the calls of one method after the first `skip` fail `times` times with
// `code`; methods are named "ping" (the probe's prepare() and answers()), "info" (its
// clock_offset() and cgroup_facts()), "create", "inspect", "kill", "remove", "list", the
// launch's steps "attach" (the streams), "wait" (registering for the end) and "start", "remake"
// (a start that fails asking for the box to be made again: engine::LaunchFailure::remake), and
// "wait_result" (the end's answer). A box created again after its removal is a new one. slow(method, delay, times) makes the next `times`
// calls of "remove" or "inspect" answer only after `delay` (an engine that is slow to answer).
// Every call is recorded in calls(). Single-threaded, on the io_context it is given.
#pragma once

#include "common/clock.hpp"
#include "daemon/engine/box_engine.hpp"
#include "daemon/engine/docker_engine_probe.hpp"
#include "daemon/engine/engine_clock.hpp"
#include "daemon/engine/engine_probe.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pybox::test {

namespace fake_box_detail {
namespace net = boost::asio;
constexpr auto k_use = net::as_tuple(net::use_awaitable);
}  // namespace fake_box_detail

struct FakeProgram {
    std::string out;  // written to stdout
    std::string err;  // written to stderr
    std::int64_t exit_code = 0;
    std::chrono::milliseconds runs_for{20};
    bool until_killed = false;       // runs until kill_box(); then exits with 137
    bool oom_killed = false;         // the engine reports an OOM kill in the box
    bool stream_stays_open = false;  // the output stream does not end when the box exits
    // What the box reports of the program's environment (engine::BoxStreams::environment).
    engine::EnvironmentReport environment{std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin"}, ""};
};

class FakeBoxEngine final : public engine::BoxEngine, public engine::EngineProbe {
public:
    static constexpr const char* k_box_id = "fakebox1";
    static constexpr std::int64_t k_first_pid = 4242;

    explicit FakeBoxEngine(boost::asio::io_context& io) : m_io(io) {}

    FakeProgram program;
    std::vector<std::string> create_warnings;
    std::vector<engine::SettingMismatch> mismatches;  // what check_settings reports
    // What check_settings reports besides of a box that ended (a setting known once it ran).
    std::vector<engine::SettingMismatch> mismatches_once_ended;
    // What check_settings says the settings leave unknown.
    std::vector<std::pair<std::string, std::string>> settings_unknown;
    // What a launched box's end says the engine observed of its resources (BoxEnd::resources()).
    std::optional<ResourceObservation> observed_resources;
    bool places_boxes = true;  // whether box_cgroup() names where a box is

    void fail(std::string method, std::string code, int times = 1, int skip = 0)
    {
        m_faults[std::move(method)] = Fault{std::move(code), times, skip};
    }
    void slow(std::string method, std::chrono::milliseconds delay, int times = 1)
    {
        m_slow[std::move(method)] = Slow{delay, times};
    }
    const std::vector<std::string>& calls() const { return m_calls; }
    int count(std::string_view method) const
    {
        int n = 0;
        for (const auto& call : m_calls) n += call == method ? 1 : 0;
        return n;
    }
    bool box_exists() const { return m_created && !m_removed; }
    const std::string& stdin_received() const { return m_stdin; }
    const engine::BoxSpec& spec() const { return m_spec; }

    std::string describe() const override { return "fake://box-engine"; }
    std::string output_provenance() const override { return "target byte streams via the fake engine; untrusted content"; }
    // Placed as a Docker engine with the cgroupfs driver places its boxes, unless !places_boxes.
    std::optional<std::string> box_cgroup(std::string_view run_parent, std::string_view box_id) const override
    {
        if (!places_boxes) return std::nullopt;
        return std::string(run_parent) + "/" + std::string(box_id);
    }

    boost::asio::awaitable<Expected<void>> prepare(engine::Timeout timeout) override
    {
        if (m_pinged) co_return Expected<void>{};
        co_return co_await answers(timeout);
    }

    boost::asio::awaitable<Expected<void>> answers(engine::Timeout) override
    {
        if (auto fault = take("ping")) co_return *fault;
        m_pinged = true;
        co_return Expected<void>{};
    }

    // The engine's clock is the daemon's.
    boost::asio::awaitable<Expected<proto::ClockOffset>> clock_offset(engine::Timeout) override
    {
        const std::int64_t before_ns = unix_nanoseconds(WallClock::now());
        if (auto fault = take("info")) co_return *fault;
        engine::EngineInfo info;
        info.system_time = rfc3339_utc(WallClock::now());
        co_return engine::engine_clock_offset(before_ns, info, unix_nanoseconds(WallClock::now()));
    }

    // A Docker engine's, so that its receipts read as a Docker run's.
    proto::EngineClockNames clock_names() const override { return engine::docker_clock_names(); }

    boost::asio::awaitable<Expected<engine::CgroupFacts>> cgroup_facts(engine::Timeout) override
    {
        if (auto fault = take("info")) co_return *fault;
        co_return make_error("cgroup_unknown", "the fake engine has no cgroups");
    }

    boost::asio::awaitable<Expected<engine::CreatedBox>> create_box(const engine::BoxSpec& spec,
                                                                    engine::Timeout) override
    {
        if (auto fault = take("create")) co_return *fault;
        m_spec = spec;
        m_created = true;
        m_removed = false;
        m_exited = false;
        m_started_ns.reset();
        co_return engine::CreatedBox{k_box_id, create_warnings};
    }

    boost::asio::awaitable<Expected<engine::BoxInspection>> inspect_box(std::string_view id,
                                                                        engine::Timeout) override
    {
        co_await pause_if_slow("inspect");
        if (auto fault = take("inspect")) co_return *fault;
        if (id != k_box_id || !box_exists()) co_return no_such_box();
        engine::BoxInspection inspection;
        inspection.state = state();
        inspection.raw = boost::json::object{{"fake_box", k_box_id}};
        co_return inspection;
    }

    engine::SettingsCheck check_settings(const engine::BoxSpec&, const engine::BoxInspection& inspection) const override
    {
        auto found = mismatches;
        if (inspection.state.exit_code)
            found.insert(found.end(), mismatches_once_ended.begin(), mismatches_once_ended.end());
        return {found,
                boost::json::object{{"checked_by", "fake"},
                                    {"ended", inspection.state.exit_code.has_value()},
                                    {"mismatches", static_cast<std::uint64_t>(found.size())}},
                settings_unknown};
    }

    boost::asio::awaitable<boost::system::result<engine::LaunchedBox, engine::LaunchFailure>> launch_box(
        std::string_view, engine::LaunchTimeouts) override
    {
        using Step = engine::LaunchFailure::Step;
        if (auto fault = take("attach")) co_return engine::LaunchFailure{Step::streams, *fault};
        if (auto fault = take("wait")) co_return engine::LaunchFailure{Step::end, *fault};
        engine::LaunchedBox launched{std::make_unique<Attach>(*this), std::make_unique<End>(*this), MonoClock::now()};
        if (auto fault = take("start")) co_return engine::LaunchFailure{Step::start, *fault};
        if (auto fault = take("remake")) co_return engine::LaunchFailure{Step::start, *fault, true};
        m_started_ns = unix_nanoseconds(WallClock::now());
        if (!program.until_killed) end_after(program.runs_for, program.exit_code);
        co_return std::move(launched);
    }

    boost::asio::awaitable<Expected<engine::BoxKillOutcome>> kill_box(std::string_view, engine::Timeout) override
    {
        if (auto fault = take("kill")) co_return *fault;
        if (m_exited) co_return engine::BoxKillOutcome::already_ended;
        end_now(137);
        co_return engine::BoxKillOutcome::killed;
    }

    boost::asio::awaitable<Expected<void>> remove_box(std::string_view, engine::Timeout) override
    {
        co_await pause_if_slow("remove");
        if (auto fault = take("remove")) co_return *fault;
        m_removed = true;
        if (!m_exited) end_now(137);
        co_return Expected<void>{};
    }

    boost::asio::awaitable<Expected<std::vector<engine::ListedBox>>> list_boxes(const std::vector<std::string>&,
                                                                               engine::Timeout) override
    {
        if (auto fault = take("list")) co_return *fault;
        std::vector<engine::ListedBox> boxes;
        if (box_exists()) boxes.push_back({k_box_id, m_spec.labels});
        co_return boxes;
    }

private:
    struct Fault {
        std::string code;
        int times = 1;
        int skip = 0;
    };

    class Attach final : public engine::BoxStreams {
    public:
        explicit Attach(FakeBoxEngine& engine) : m_engine(engine) {}
        boost::asio::awaitable<Expected<void>> write_stdin(std::string_view bytes, engine::Timeout) override
        {
            m_engine.m_stdin.append(bytes);
            co_return Expected<void>{};
        }
        Expected<void> close_stdin() override { return {}; }
        boost::asio::awaitable<Expected<std::vector<engine::OutputChunk>>> read_output() override
        {
            using namespace fake_box_detail;
            using proto::OutputStream;
            while (!m_engine.m_exited && !m_cancelled) co_await m_engine.m_changed.async_wait(k_use);
            while (m_engine.program.stream_stays_open && !m_cancelled) co_await m_engine.m_changed.async_wait(k_use);
            if (m_cancelled) co_return make_error("engine_protocol", "the attach connection was closed");
            std::vector<engine::OutputChunk> chunks;
            if (m_sent) co_return chunks;
            m_sent = true;
            if (!m_engine.program.out.empty()) chunks.push_back({OutputStream::stdout_stream, m_engine.program.out});
            if (!m_engine.program.err.empty()) chunks.push_back({OutputStream::stderr_stream, m_engine.program.err});
            co_return chunks;
        }
        std::optional<std::string> malformed() const override { return std::nullopt; }
        void cancel() override
        {
            m_cancelled = true;
            m_engine.m_changed.cancel();
        }
        engine::EnvironmentReport environment() const override { return m_engine.program.environment; }

    private:
        FakeBoxEngine& m_engine;
        bool m_cancelled = false;
        bool m_sent = false;
    };

    class End final : public engine::BoxEnd {
    public:
        explicit End(FakeBoxEngine& engine) : m_engine(engine) {}
        boost::asio::awaitable<Expected<void>> ended(engine::Timeout) override
        {
            using namespace fake_box_detail;
            while (!m_engine.m_exited && !m_cancelled) co_await m_engine.m_changed.async_wait(k_use);
            if (m_cancelled) co_return make_error("cancelled", "the wait was abandoned");
            if (auto fault = m_engine.take("wait_result")) co_return *fault;
            co_return Expected<void>{};
        }
        void cancel() override
        {
            m_cancelled = true;
            m_engine.m_changed.cancel();
        }
        std::optional<ResourceObservation> resources() const override { return m_engine.observed_resources; }

    private:
        FakeBoxEngine& m_engine;
        bool m_cancelled = false;
    };

    struct Slow {
        std::chrono::milliseconds delay{0};
        int times = 0;
    };

    boost::asio::awaitable<void> pause_if_slow(const std::string& method)
    {
        auto found = m_slow.find(method);
        if (found == m_slow.end() || found->second.times <= 0) co_return;
        --found->second.times;
        boost::asio::steady_timer timer(m_io, found->second.delay);
        co_await timer.async_wait(fake_box_detail::k_use);
    }

    std::optional<Error> take(const std::string& method)
    {
        m_calls.push_back(method);
        auto found = m_faults.find(method);
        if (found == m_faults.end()) return std::nullopt;
        Fault& fault = found->second;
        if (fault.skip > 0) {
            --fault.skip;
            return std::nullopt;
        }
        if (fault.times <= 0) return std::nullopt;
        --fault.times;
        return make_error(fault.code, "injected " + fault.code + " on " + method);
    }

    static Error no_such_box() { return make_error("engine_no_such_object", "no such box"); }

    engine::BoxState state() const
    {
        engine::BoxState state;
        state.reported = true;
        state.running = m_started_ns && !m_exited;
        state.status = m_exited ? "exited" : state.running ? "running" : "created";
        if (m_exited) {
            state.exit_code = m_exit_code;
            state.oom_killed = program.oom_killed;
            state.finished_at_ns = m_finished_ns;
        }
        if (state.running) state.first_pid = k_first_pid;
        if (m_started_ns) state.started_at_ns = m_started_ns;
        state.raw = boost::json::object{{"status", state.status}};
        state.summary = {{"status", state.status},
                         {"exit_code", state.exit_code ? boost::json::value(*state.exit_code) : nullptr},
                         {"oom_killed", state.oom_killed}};
        state.exit_code_record = {{"exit_code", state.exit_code ? boost::json::value(*state.exit_code) : nullptr}};
        return state;
    }

    void end_after(std::chrono::milliseconds after, std::int64_t code)
    {
        auto timer = std::make_shared<boost::asio::steady_timer>(m_io, after);
        timer->async_wait([this, timer, code](boost::system::error_code) {
            if (!m_exited) end_now(code);
        });
    }

    void end_now(std::int64_t code)
    {
        m_exited = true;
        m_exit_code = code;
        m_finished_ns = unix_nanoseconds(WallClock::now());
        m_changed.cancel();
    }

    boost::asio::io_context& m_io;
    boost::asio::steady_timer m_changed{m_io, boost::asio::steady_timer::time_point::max()};
    std::map<std::string, Fault> m_faults;
    std::map<std::string, Slow> m_slow;
    std::vector<std::string> m_calls;
    engine::BoxSpec m_spec;
    std::string m_stdin;
    bool m_pinged = false;
    bool m_created = false;
    bool m_removed = false;
    bool m_exited = false;
    std::int64_t m_exit_code = 0;
    std::optional<std::int64_t> m_started_ns;
    std::int64_t m_finished_ns = 0;
};

}  // namespace pybox::test
