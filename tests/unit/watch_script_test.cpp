// The embedded watch.sh run by /bin/sh on fake cgroup trees laid out like v1 and v2, with tiny
// gaps; what it prints must pass the strict parser.
#include "daemon/watcher/watch_script.hpp"

#include "common/process.hpp"
#include "common/sha256.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace pybox;
using namespace std::chrono_literals;
using watcher::CgroupVersion;
using watcher::WatchEnd;
namespace fs = std::filesystem;

namespace {

// A temporary cgroup mount root holding the run parent /p and the box /p/b.
class CgroupTree {
public:
    explicit CgroupTree(CgroupVersion version) : m_version(version)
    {
        static int counter = 0;
        m_root = fs::temp_directory_path() /
                 ("pybox-watch-" + std::to_string(current_pid()) + "-" + std::to_string(++counter));
        fs::remove_all(m_root);
    }
    ~CgroupTree() { fs::remove_all(m_root); }
    CgroupTree(const CgroupTree&) = delete;
    CgroupTree& operator=(const CgroupTree&) = delete;

    const fs::path& root() const { return m_root; }

    // Every file the watcher reads, each value `base` plus a small offset per file.
    void write(const std::string& cgroup, std::int64_t base, std::int64_t tasks)
    {
        const auto n = [&](int offset) { return std::to_string(base + offset) + "\n"; };
        if (m_version == CgroupVersion::v1) {
            file("memory", cgroup, "memory.usage_in_bytes", n(1));
            file("memory", cgroup, "memory.max_usage_in_bytes", n(2));
            file("memory", cgroup, "memory.memsw.usage_in_bytes", n(3));
            file("memory", cgroup, "memory.memsw.max_usage_in_bytes", n(4));
            file("memory", cgroup, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill " + n(6));
            file("cpu", cgroup, "cpu.stat",
                 "nr_periods " + n(7) + "nr_throttled " + n(8) + "throttled_time " + n(9) + "nr_bursts 0\n");
            file("cpuacct", cgroup, "cpuacct.usage", n(10));
            file("cpuacct", cgroup, "cpuacct.usage_user", n(11));
            file("cpuacct", cgroup, "cpuacct.usage_sys", n(12));
            file("pids", cgroup, "pids.current", std::to_string(tasks) + "\n");
            file("pids", cgroup, "pids.peak", n(13));
            file("pids", cgroup, "pids.events", "max " + n(14));
        } else {
            file("", cgroup, "memory.current", n(1));
            file("", cgroup, "memory.peak", n(2));
            file("", cgroup, "memory.swap.current", n(3));
            file("", cgroup, "memory.swap.peak", n(4));
            file("", cgroup, "memory.events", "low 0\nhigh 0\nmax " + n(5) + "oom 1\noom_kill " + n(6));
            file("", cgroup, "cpu.stat",
                 "usage_usec " + n(7) + "user_usec " + n(8) + "system_usec " + n(9) +
                     "core_sched.force_idle_usec 0\nnr_periods 1\nnr_throttled 2\nthrottled_usec 3\n");
            file("", cgroup, "pids.current", std::to_string(tasks) + "\n");
            file("", cgroup, "pids.peak", n(10));
            file("", cgroup, "pids.events", "max " + n(11));
            file("", cgroup, "pids.events.local", "max " + n(12));
        }
    }

    std::vector<std::string> command(int max_samples, int max_run_cs, int final_polls = 5) const
    {
        watcher::WatchSchedule schedule;
        schedule.fast_gap = 5ms;
        schedule.fast_samples = 2;
        schedule.slow_gap = 10ms;
        schedule.max_samples = max_samples;
        schedule.max_run = std::chrono::milliseconds(max_run_cs * 10);
        schedule.final_gap = 10ms;
        schedule.final_polls = final_polls;
        return watcher::watch_command({m_version, m_root.string(), "/p/b", "/p"}, schedule);
    }

private:
    void file(const std::string& controller, const std::string& cgroup, const std::string& name,
              const std::string& content)
    {
        const auto dir = (controller.empty() ? m_root : m_root / controller) / cgroup;
        fs::create_directories(dir);
        std::ofstream(dir / name) << content;
    }

    CgroupVersion m_version;
    fs::path m_root;
};

std::string run_to_end(const std::vector<std::string>& argv)
{
    ProcessOptions options;
    options.separate_stderr = true;
    options.timeout = 5s;
    const auto result = run_process(argv, options);
    REQUIRE(result.has_value());
    CHECK(result->exit_code == 0);
    return result->output;
}

// A watcher started with its stdout on a pipe; SIGKILLed if a test leaves it running.
class RunningWatcher {
public:
    explicit RunningWatcher(const std::vector<std::string>& argv)
    {
        auto child = spawn_with_stdout_pipe(argv);
        REQUIRE(child.has_value());
        m_pid = child->pid;
        m_out = ::fdopen(child->stdout_fd, "r");
        REQUIRE(m_out != nullptr);
    }
    ~RunningWatcher()
    {
        if (m_out != nullptr) std::fclose(m_out);
        if (m_pid > 0 && !try_reap(m_pid)) {
            send_signal(m_pid, k_signal_kill);
            for (int i = 0; i < 100 && !try_reap(m_pid); ++i) std::this_thread::sleep_for(10ms);
        }
    }
    RunningWatcher(const RunningWatcher&) = delete;
    RunningWatcher& operator=(const RunningWatcher&) = delete;

    std::string line()
    {
        char buffer[4096];
        return std::fgets(buffer, sizeof buffer, m_out) != nullptr ? std::string(buffer) : std::string();
    }
    // Everything up to end of file, then the exit code.
    std::string rest()
    {
        std::string text;
        for (auto next = line(); !next.empty(); next = line()) text += next;
        std::optional<ProcessResult> ended;
        for (int i = 0; i < 200 && !(ended = try_reap(m_pid)); ++i) std::this_thread::sleep_for(10ms);
        REQUIRE(ended.has_value());
        CHECK(ended->exit_code == 0);
        m_pid = -1;
        return text;
    }
    void signal(int number) { REQUIRE(send_signal(m_pid, number)); }

private:
    int m_pid = -1;
    std::FILE* m_out = nullptr;
};

watcher::WatchRecord parsed(const std::string& text, CgroupVersion version)
{
    auto record = watcher::parse_watch_output(text, version);
    INFO(text);
    REQUIRE(record.has_value());
    return std::move(*record);
}

}  // namespace

TEST_CASE("watch_command runs the embedded script with the target and the schedule as arguments")
{
    const auto argv = watcher::watch_command({CgroupVersion::v2, "/sys/fs/cgroup", "/pybox-i/r/abc", "/pybox-i/r"},
                                             watcher::watch_schedule(2.0));
    CHECK(argv == std::vector<std::string>{"/bin/sh", "-c", std::string(watcher::watch_script()), "pybox-watch", "2",
                                           "/sys/fs/cgroup", "/pybox-i/r/abc", "/pybox-i/r", "50", "20", "46", "64",
                                           "600", "10", "100"});
}

TEST_CASE("The script's SHA-256 names exactly the embedded text")
{
    CHECK(watcher::watch_script().starts_with("# pybox-watch: PyBox's kernel watcher"));
    CHECK(watcher::watch_script_sha256() == sha256_hex(watcher::watch_script()));
}

TEST_CASE("On a v1 tree the script prints samples with every v1 key, which the parser accepts")
{
    CgroupTree tree(CgroupVersion::v1);
    tree.write("p/b", 1000, 2);
    tree.write("p", 5000, 2);
    const auto record = parsed(run_to_end(tree.command(3, 10)), CgroupVersion::v1);
    REQUIRE(record.samples.size() == 3);
    const auto& sample = record.samples.front();
    CHECK(sample.value("memory.max_usage_in_bytes") == 1002);
    CHECK(sample.value("memory.oom_control.oom_kill") == 1006);
    CHECK(sample.value("cpu.stat.throttled_time") == 1009);
    CHECK(sample.value("cpuacct.usage_sys") == 1012);
    CHECK(sample.value("pids.current") == 2);
    CHECK(sample.value("pids.events.max") == 1014);
    CHECK(record.samples.front().time_cs >= record.start_cs);
    CHECK(record.end == WatchEnd::time);
}

TEST_CASE("On a v2 tree the script prints samples with every v2 key, which the parser accepts")
{
    CgroupTree tree(CgroupVersion::v2);
    tree.write("p/b", 1000, 2);
    const auto record = parsed(run_to_end(tree.command(2, 10)), CgroupVersion::v2);
    REQUIRE(record.samples.size() == 2);
    const auto& sample = record.samples.front();
    CHECK(sample.value("memory.events.oom_kill") == 1006);
    CHECK(sample.value("cpu.stat.usage_usec") == 1007);
    CHECK(sample.value("cpu.stat.throttled_usec") == 3);
    CHECK(sample.value("pids.events.local.max") == 1012);
}

TEST_CASE("A missing file or key is printed as unreadable, not left out")
{
    CgroupTree tree(CgroupVersion::v1);
    tree.write("p/b", 1000, 2);
    fs::remove(tree.root() / "memory/p/b/memory.memsw.usage_in_bytes");
    std::ofstream(tree.root() / "cpu/p/b/cpu.stat") << "nr_periods 4\n";
    std::ofstream(tree.root() / "pids/p/b/pids.peak") << "not a number\n";
    const auto record = parsed(run_to_end(tree.command(1, 5)), CgroupVersion::v1);
    const auto& values = record.samples.at(0).values;
    CHECK_FALSE(values.at("memory.memsw.usage_in_bytes").has_value());
    CHECK(values.at("cpu.stat.nr_periods") == 4);
    CHECK_FALSE(values.at("cpu.stat.nr_throttled").has_value());
    CHECK_FALSE(values.at("pids.peak").has_value());
}

TEST_CASE("A box cgroup that does not exist is sampled as gone")
{
    CgroupTree tree(CgroupVersion::v1);
    tree.write("p", 5000, 0);
    const auto record = parsed(run_to_end(tree.command(2, 5)), CgroupVersion::v1);
    REQUIRE(record.samples.size() == 2);
    CHECK(record.samples[0].gone);
    CHECK(record.samples[1].gone);
}

TEST_CASE("The watcher stops by itself at its time limit, however many samples are left")
{
    CgroupTree tree(CgroupVersion::v2);
    tree.write("p/b", 1000, 1);
    const auto started = std::chrono::steady_clock::now();
    const auto record = parsed(run_to_end(tree.command(64, 8)), CgroupVersion::v2);
    CHECK(std::chrono::steady_clock::now() - started < 1s);
    CHECK(record.samples.size() < 64);
    CHECK(record.end == WatchEnd::time);
}

TEST_CASE("SIGUSR1 makes the watcher read the box and the run parent once more once the run has no task")
{
    CgroupTree tree(CgroupVersion::v1);
    tree.write("p/b", 1000, 0);
    tree.write("p", 5000, 0);
    RunningWatcher watcher(tree.command(64, 300));
    const auto header = watcher.line();
    CHECK(header.starts_with("pybox-watch 1 cgroup=1 start="));
    watcher.signal(k_signal_user1);
    const auto record = parsed(header + watcher.rest(), CgroupVersion::v1);
    CHECK(record.end == WatchEnd::final);
    REQUIRE(record.final_box);
    CHECK(record.final_box->value("cpu.stat.nr_throttled") == 1008);
    REQUIRE(record.final_parent);
    CHECK(record.final_parent->value("memory.max_usage_in_bytes") == 5002);
    CHECK(record.final_parent->value("pids.current") == 0);
}

TEST_CASE("After SIGUSR1 a box cgroup already removed is read as gone and the run parent still read")
{
    CgroupTree tree(CgroupVersion::v2);
    tree.write("p", 5000, 0);
    RunningWatcher watcher(tree.command(64, 300));
    const auto header = watcher.line();
    watcher.signal(k_signal_user1);
    const auto record = parsed(header + watcher.rest(), CgroupVersion::v2);
    REQUIRE(record.final_box);
    CHECK(record.final_box->gone);
    CHECK(record.final_parent->value("cpu.stat.usage_usec") == 5007);
}

TEST_CASE("After SIGUSR1 a run that still has a task ends the watcher with wait_timeout and no final reading")
{
    CgroupTree tree(CgroupVersion::v1);
    tree.write("p/b", 1000, 1);
    tree.write("p", 5000, 1);
    RunningWatcher watcher(tree.command(64, 300, 3));
    const auto header = watcher.line();
    watcher.signal(k_signal_user1);
    const auto record = parsed(header + watcher.rest(), CgroupVersion::v1);
    CHECK(record.end == WatchEnd::wait_timeout);
    CHECK_FALSE(record.final_box);
}

TEST_CASE("SIGTERM ends the watcher promptly with end signal")
{
    CgroupTree tree(CgroupVersion::v2);
    tree.write("p/b", 1000, 1);
    RunningWatcher watcher(tree.command(64, 300));
    const auto header = watcher.line();
    const auto started = std::chrono::steady_clock::now();
    watcher.signal(k_signal_terminate);
    const auto record = parsed(header + watcher.rest(), CgroupVersion::v2);
    CHECK(std::chrono::steady_clock::now() - started < 500ms);
    CHECK(record.end == WatchEnd::signal);
}

TEST_CASE("The script refuses a wrong argument list without printing anything")
{
    ProcessOptions options;
    options.separate_stderr = true;
    const auto result = run_process({"/bin/sh", "-c", std::string(watcher::watch_script()), "pybox-watch", "1"}, options);
    REQUIRE(result.has_value());
    CHECK(result->exit_code == 2);
    CHECK(result->output.empty());
    CHECK_THAT(result->error_output, Catch::Contains("expected 11 arguments"));
}
