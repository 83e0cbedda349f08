#include "daemon/watcher/ssh_cgroup_host.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/engine/ssh_rules.hpp"
#include "daemon/watcher/watch_collector.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <variant>

namespace pybox::watcher {

namespace {

using namespace boost::asio::experimental::awaitable_operators;
using Stream = net::local::stream_protocol::socket;
using std::chrono::milliseconds;

constexpr auto k_use = net::as_tuple(net::use_awaitable);
constexpr milliseconds k_channel_open_timeout{10'000};
// What a run parent script may print (its errors and exit status: a few lines).
constexpr std::size_t k_max_script_output = 64 * 1024;

// sh -c RELAY pybox-relay WATCHER-ARGV...
constexpr std::string_view k_relay = R"(# pybox-watch-relay: runs the watcher ("$@") and turns stdin lines into signals for it.
"$@" &
watcher=$!
exec >/dev/null 2>&1
while read -r signal; do
    case $signal in
    USR1 | USR2) kill -s "$signal" "$watcher" ;;
    esac
done
kill -s TERM "$watcher"
wait "$watcher"
)";

// sh -c CREATE pybox-cgroup ROOT VERSION PATH: the run parent below each v1 controller PyBox
// uses (memory cpu cpuacct pids), or below the v2 mount.
constexpr std::string_view k_create = R"(root=$1 version=$2 path=$3
if [ "$version" = 1 ]; then set -- /memory /cpu /cpuacct /pids; else set -- ""; fi
for controller; do
    mkdir -p -- "$root$controller$path" || exit 1
done
)";

// sh -c REMOVE pybox-cgroup ROOT PATH: the run parent below the mount and below every hierarchy
// (the engine made it in each one it joined); exit 3 when one still holds a task or a child.
constexpr std::string_view k_remove = R"(export LC_ALL=C
root=$1 path=$2 status=0
for base in "$root" "$root"/*; do
    if [ ! -d "$base" ] || [ -L "$base" ] || [ ! -d "$base$path" ]; then continue; fi
    if rmdir -- "$base$path"; then continue; fi
    busy=
    if read -r task 2>/dev/null <"$base$path/cgroup.procs"; then busy=1; fi
    for child in "$base$path"/*/; do if [ -d "$child" ]; then busy=1; fi; done
    if [ -n "$busy" ]; then status=3; elif [ "$status" = 0 ]; then status=1; fi
done
exit $status
)";

// sh -c KILL pybox-cgroup ROOT PATH: SIGKILL to every process in the run parent and the cgroups
// directly below it, in every hierarchy, then rmdir of those below it that are empty; prints how
// many signals were sent.
constexpr std::string_view k_kill = R"(root=$1 path=$2 sent=0
for base in "$root" "$root"/*; do
    if [ ! -d "$base" ] || [ -L "$base" ] || [ ! -d "$base$path" ]; then continue; fi
    for procs in "$base$path/cgroup.procs" "$base$path"/*/cgroup.procs; do
        [ -f "$procs" ] || continue
        while read -r pid; do
            if [ "$pid" -gt 1 ] 2>/dev/null && kill -9 "$pid" 2>/dev/null; then sent=$((sent + 1)); fi
        done <"$procs"
    done
    for below in "$base$path"/*/; do if [ -d "$below" ]; then rmdir -- "$below" 2>/dev/null; fi; done
done
echo "$sent"
)";

bool plain_cgroup_path(std::string_view path)
{
    if (path.size() < 2 || path.front() != '/' || path.find("..") != std::string_view::npos) return false;
    return std::all_of(path.begin(), path.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '_' ||
               c == '-' || c == '.';
    });
}

// The command line that replaces the shell it is given to with `argv`. `exec`: a shell that runs
// a last command as its child (dash, the VM's and many hosts' /bin/sh) would otherwise keep the
// command's stdout open after the command has closed it, and its end would never show.
std::string exec_command(const std::vector<std::string>& argv) { return "exec " + engine::shell_command(argv); }

// sh -c "(SCRIPT) 2>&1; echo $?" pybox-cgroup ARGS...: an exec channel passes on stdout only,
// so the script's errors and then its exit status come back on it.
std::string script_command(std::string_view script, std::vector<std::string> args)
{
    std::vector<std::string> argv{"sh", "-c", "(\n" + std::string(script) + ") 2>&1\necho \"$?\"\n", "pybox-cgroup"};
    argv.insert(argv.end(), args.begin(), args.end());
    return exec_command(argv);
}

// Reads `stream` to its end, keeping at most k_max_script_output bytes.
net::awaitable<std::string> read_to_end(Stream& stream)
{
    std::string text;
    std::array<char, 4096> buffer;
    for (;;) {
        auto [ec, got] = co_await stream.async_read_some(net::buffer(buffer), k_use);
        text.append(buffer.data(), std::min(got, k_max_script_output - std::min(text.size(), k_max_script_output)));
        if (ec) break;
    }
    co_return text;
}

// The script's output and, from its last line, its exit status; nullopt when that line is missing.
std::optional<ScriptResult> split_status(std::string_view text)
{
    if (text.empty() || text.back() != '\n') return std::nullopt;
    text.remove_suffix(1);
    const auto line_start = text.rfind('\n') == std::string_view::npos ? 0 : text.rfind('\n') + 1;
    const auto line = text.substr(line_start);
    ScriptResult result;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), result.exit_status);
    if (ec != std::errc() || end != line.data() + line.size()) return std::nullopt;
    result.output = std::string(text.substr(0, line_start));
    return result;
}

struct SshWatchState {
    explicit SshWatchState(Stream channel) : stream(std::move(channel)), output_ended(stream.get_executor())
    {
        output_ended.expires_at(MonoClock::time_point::max());
    }

    Stream stream;
    net::steady_timer output_ended;  // cancelled when the output reaches its end
    WatchCollector collected;
    std::string final_request;  // "USR1" or "USR2" once one is wanted
    bool final_sent = false;
    bool eof = false;

    void want_final(std::string_view signal)
    {
        if (final_request != "USR2") final_request = signal;
        send_final_if_ready();
    }

    void send_final_if_ready()
    {
        if (final_request.empty() || !collected.header_seen || final_sent || eof) return;
        // A few bytes into an empty socketpair buffer: never blocks.
        const std::string line = final_request + "\n";
        boost::system::error_code ec;
        net::write(stream, net::buffer(line), ec);
        final_sent = true;
    }

    void take(std::string_view bytes)
    {
        collected.take(bytes);
        send_final_if_ready();
    }

    void end_channel()
    {
        boost::system::error_code ignored;
        stream.shutdown(Stream::shutdown_both, ignored);
        stream.close(ignored);
    }
};

class SshWatchSession final : public WatchSession {
public:
    explicit SshWatchSession(std::shared_ptr<SshWatchState> state) : m_state(std::move(state)) {}

    // Closing the channel ends the relay's stdin, which stops the watcher.
    ~SshWatchSession() override { m_state->end_channel(); }

    void request_final() override { m_state->want_final("USR1"); }
    void final_when_ended(int) override {}

    net::awaitable<WatchOutput> finish(milliseconds timeout) override
    {
        auto& state = *m_state;
        co_await wait_for_watch_end(state, timeout);
        if (!state.eof) state.collected.output.killed = true;
        state.end_channel();
        co_return state.collected.output;
    }

private:
    std::shared_ptr<SshWatchState> m_state;
};

}  // namespace

std::string_view watch_relay_script() { return k_relay; }

std::string remote_watch_command(const std::vector<std::string>& argv)
{
    std::vector<std::string> words{"sh", "-c", std::string(k_relay), "pybox-relay"};
    words.insert(words.end(), argv.begin(), argv.end());
    return exec_command(words);
}

SshCgroupHost::SshCgroupHost(net::any_io_executor executor, std::shared_ptr<engine::CommandChannels> channels,
                             std::string mount_root)
    : m_executor(std::move(executor)), m_channels(std::move(channels)), m_mount_root(std::move(mount_root))
{
}

std::string SshCgroupHost::describe() const { return m_channels->describe() + " (cgroup files read over ssh)"; }

net::awaitable<Expected<ScriptResult>> SshCgroupHost::run_script(std::string_view script, std::vector<std::string> args)
{
    const auto deadline = MonoClock::now() + k_cgroup_command_timeout;
    auto opened = co_await m_channels->open_stream(m_executor, script_command(script, std::move(args)),
                                                  k_cgroup_command_timeout);
    if (!opened) co_return opened.error();
    Stream stream = std::move(*opened);
    boost::system::error_code ignored;
    stream.shutdown(Stream::shutdown_send, ignored);  // empty stdin
    net::steady_timer limit(m_executor, deadline);
    auto ended = co_await (read_to_end(stream) || limit.async_wait(k_use));
    if (ended.index() != 0)
        co_return make_error(api_error::k_engine_timeout, "a command on " + m_channels->describe() + " did not end in time");
    auto result = split_status(std::get<0>(ended));
    if (!result)
        co_return make_error(api_error::k_engine_unreachable, "a command on " + m_channels->describe() +
                                                       " ended without its exit status: " +
                                                       m_channels->last_drop().value_or("its channel was closed"));
    co_return std::move(*result);
}

net::awaitable<Expected<void>> SshCgroupHost::create_run_parent(int cgroup_version, std::string path)
{
    if (!plain_cgroup_path(path))
        co_return make_error(api_error::k_cgroup_failed, "PyBox does not send the cgroup path \"" + path + "\" to " +
                                                  m_channels->describe() + ": it is not a plain absolute path");
    std::vector<std::string> args{m_mount_root, std::to_string(cgroup_version), path};
    auto result = co_await run_script(k_create, std::move(args));
    if (!result) co_return result.error();
    if (result->exit_status != 0)
        co_return make_error(api_error::k_cgroup_failed, "cannot make the run parent " + path + " on " + m_channels->describe() +
                                                  ": " + result->output);
    co_return Expected<void>{};
}

net::awaitable<Expected<void>> SshCgroupHost::remove_run_parent(std::string path)
{
    if (!plain_cgroup_path(path))
        co_return make_error(api_error::k_cgroup_failed, "PyBox does not send the cgroup path \"" + path + "\" to " +
                                                  m_channels->describe() + ": it is not a plain absolute path");
    std::vector<std::string> args{m_mount_root, path};
    auto result = co_await run_script(k_remove, std::move(args));
    if (!result) co_return result.error();
    if (result->exit_status == 0) co_return Expected<void>{};
    co_return make_error(result->exit_status == 3 ? api_error::k_cgroup_busy : api_error::k_cgroup_failed,
                         "cannot remove the run parent " + path + " on " + m_channels->describe() + ": " +
                             result->output);
}

net::awaitable<Expected<int>> SshCgroupHost::empty_run_parent(std::string path)
{
    if (!plain_cgroup_path(path))
        co_return make_error(api_error::k_cgroup_failed, "PyBox does not send the cgroup path \"" + path + "\" to " +
                                                  m_channels->describe() + ": it is not a plain absolute path");
    std::vector<std::string> args{m_mount_root, path};
    auto result = co_await run_script(k_kill, std::move(args));
    if (!result) co_return result.error();
    int sent = -1;
    const std::string_view said = result->output;
    const auto [end, ec] = std::from_chars(said.data(), said.data() + said.size(), sent);
    if (result->exit_status != 0 || ec != std::errc() || sent < 0 || std::string_view(end) != "\n")
        co_return make_error(api_error::k_cgroup_failed, "cannot stop what is left in the run parent " + path + " on " +
                                                  m_channels->describe() + ": " + result->output);
    co_return sent;
}

Expected<std::unique_ptr<WatchSession>> SshCgroupHost::start_watch(const std::vector<std::string>& argv)
{
    auto channel = m_channels->start_stream(m_executor, remote_watch_command(argv), k_channel_open_timeout);
    if (!channel) return channel.error();
    auto state = std::make_shared<SshWatchState>(std::move(*channel));
    net::co_spawn(m_executor, read_watch_output(state), net::detached);
    return std::unique_ptr<WatchSession>(std::make_unique<SshWatchSession>(std::move(state)));
}

}  // namespace pybox::watcher
