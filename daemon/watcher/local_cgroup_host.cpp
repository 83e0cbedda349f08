#include "daemon/watcher/local_cgroup_host.hpp"

#include "common/api_error_codes.hpp"
#include "common/files.hpp"
#include "common/process.hpp"
#include "daemon/watcher/watch_collector.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <array>
#include <sstream>
#include <thread>
#include <system_error>

namespace pybox::watcher {

namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr auto k_use = net::as_tuple(net::use_awaitable);
// The v1 hierarchies PyBox creates run parents in; the engine creates the others itself.
constexpr std::string_view k_v1_controllers[] = {"memory", "cpu", "cpuacct", "pids"};
// After its output ended (or it was killed), a watcher is reaped within this.
constexpr milliseconds k_reap_poll{2};
constexpr int k_reap_polls = 500;

Error cgroup_error(const fs::path& path, const std::error_code& error)
{
    const bool busy = error == std::errc::device_or_resource_busy || error == std::errc::directory_not_empty;
    return make_error(busy ? api_error::k_cgroup_busy : api_error::k_cgroup_failed, path.string() + ": " + error.message());
}

fs::path below(const fs::path& root, std::string_view path) { return root / fs::path(path).relative_path(); }

// The watcher's state, shared by the session and the coroutine reading its output.
struct WatchState {
    WatchState(const net::any_io_executor& executor, PipedChild child)
        : pid(child.pid), stream(executor, child.stdout_fd), output_ended(executor)
    {
        output_ended.expires_at(MonoClock::time_point::max());
    }

    int pid;
    net::posix::stream_descriptor stream;
    std::optional<net::posix::stream_descriptor> first_process;  // a pidfd of the box's first process
    net::steady_timer output_ended;  // cancelled when the output reaches its end
    WatchCollector collected;
    // The signal that asks for the final reading (watch.sh): SIGUSR1 after the engine's report,
    // SIGUSR2 when the box's first process was seen to end; 0 until one is wanted.
    int final_signal = 0;
    bool final_sent = false;
    bool eof = false;

    void want_final(int signal)
    {
        if (final_signal != k_signal_user2) final_signal = signal;
        send_final_if_ready();
    }

    void send_final_if_ready()
    {
        if (final_signal != 0 && collected.header_seen && !final_sent && !eof) final_sent = send_signal(pid, final_signal);
    }

    void take(std::string_view bytes)
    {
        collected.take(bytes);
        send_final_if_ready();
    }
};

class LocalWatchSession final : public WatchSession {
public:
    explicit LocalWatchSession(std::shared_ptr<WatchState> state) : m_state(std::move(state)) {}

    ~LocalWatchSession() override
    {
        if (m_reaped) return;
        kill_process_group(m_state->pid);
        m_state->stream.close();
        // A killed child ends at once; reap it so it never lingers as a zombie.
        for (int poll = 0; poll < k_reap_polls && !try_reap(m_state->pid); ++poll)
            std::this_thread::sleep_for(k_reap_poll);
    }

    void request_final() override { m_state->want_final(k_signal_user1); }

    void final_when_ended(int pid) override
    {
        auto handle = open_process_handle(pid);
        if (!handle) {
            if (handle.error().code == api_error::k_process_gone) m_state->want_final(k_signal_user1);
            return;  // otherwise the engine's report of the exit asks for it
        }
        auto& state = *m_state;
        state.first_process.emplace(state.stream.get_executor(), *handle);
        state.first_process->async_wait(net::posix::stream_descriptor::wait_read,
                                        [weak = std::weak_ptr<WatchState>(m_state)](const boost::system::error_code& ec) {
                                            auto watched = weak.lock();
                                            if (!ec && watched) watched->want_final(k_signal_user2);
                                        });
    }

    net::awaitable<WatchOutput> finish(milliseconds timeout) override
    {
        auto& state = *m_state;
        co_await wait_for_watch_end(state, timeout);
        if (state.first_process) state.first_process->close();
        if (!state.eof) {
            state.collected.output.killed = true;
            kill_process_group(state.pid);
            state.stream.close();
        }
        net::steady_timer poll(co_await net::this_coro::executor);
        for (int attempt = 0; attempt < k_reap_polls && !m_reaped; ++attempt) {
            m_reaped = try_reap(state.pid).has_value();
            if (m_reaped) break;
            if (attempt == k_reap_polls / 2) kill_process_group(state.pid);
            poll.expires_after(k_reap_poll);
            co_await poll.async_wait(k_use);
        }
        co_return state.collected.output;
    }

private:
    std::shared_ptr<WatchState> m_state;
    bool m_reaped = false;
};

}  // namespace

LocalCgroupHost::LocalCgroupHost(net::any_io_executor executor, fs::path mount_root, std::string description)
    : m_executor(std::move(executor)), m_mount_root(std::move(mount_root)), m_description(std::move(description))
{
}

net::awaitable<Expected<void>> LocalCgroupHost::create_run_parent(int cgroup_version, std::string path)
{
    std::vector<fs::path> roots;
    if (cgroup_version == 1)
        for (auto controller : k_v1_controllers) roots.push_back(m_mount_root / controller);
    else
        roots.push_back(m_mount_root);
    for (const auto& root : roots) {
        std::error_code error;
        const auto directory = below(root, path);
        fs::create_directories(directory, error);
        if (error) co_return cgroup_error(directory, error);
    }
    co_return Expected<void>{};
}

net::awaitable<Expected<void>> LocalCgroupHost::remove_run_parent(std::string path)
{
    // v2: below the mount itself. v1: below every hierarchy, since the engine created the run
    // parent in each one it joined (cpuset, devices, ...).
    std::vector<fs::path> roots{m_mount_root};
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(m_mount_root, error))
        if (entry.is_directory(error) && !entry.is_symlink(error)) roots.push_back(entry.path());
    if (error) co_return cgroup_error(m_mount_root, error);
    for (const auto& root : roots) {
        const auto directory = below(root, path);
        if (!fs::remove(directory, error) && error && error != std::errc::no_such_file_or_directory)
            co_return cgroup_error(directory, error);
    }
    co_return Expected<void>{};
}

net::awaitable<Expected<int>> LocalCgroupHost::empty_run_parent(std::string path)
{
    std::vector<fs::path> roots{m_mount_root};
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(m_mount_root, error))
        if (entry.is_directory(error) && !entry.is_symlink(error)) roots.push_back(entry.path());
    if (error) co_return cgroup_error(m_mount_root, error);
    int signalled = 0;
    for (const auto& root : roots) {
        const auto parent = below(root, path);
        if (!fs::is_directory(parent, error)) continue;
        std::vector<fs::path> cgroups{parent};
        for (const auto& entry : fs::recursive_directory_iterator(parent, error))
            if (entry.is_directory(error) && !entry.is_symlink(error)) cgroups.push_back(entry.path());
        for (const auto& cgroup : cgroups) {
            auto procs = read_file_capped(cgroup / "cgroup.procs", 64 * 1024);
            if (!procs) continue;  // gone meanwhile
            std::istringstream pids(*procs);
            for (int pid = 0; pids >> pid;)
                if (pid > 1 && send_signal(pid, k_signal_kill)) ++signalled;
        }
        // The cgroups below it, deepest first; one that still holds a process stays (EBUSY).
        for (auto cgroup = cgroups.rbegin(); cgroup + 1 != cgroups.rend(); ++cgroup) fs::remove(*cgroup, error);
    }
    co_return signalled;
}

Expected<std::unique_ptr<WatchSession>> LocalCgroupHost::start_watch(const std::vector<std::string>& argv)
{
    auto child = spawn_with_stdout_pipe(argv);
    if (!child) return child.error();
    auto state = std::make_shared<WatchState>(m_executor, *child);
    net::co_spawn(m_executor, read_watch_output(state), net::detached);
    return std::unique_ptr<WatchSession>(std::make_unique<LocalWatchSession>(std::move(state)));
}

}  // namespace pybox::watcher
