// How a program ended, held against an observer that is not the engine and not the daemon: the
// test's own reader of the kernel's proc connector (its own socket and parsing, on the kernel's
// headers), which records every exec and exit of the engine's containers with the kernel's wait
// status and CLOCK_MONOTONIC time. Programs that end within +-20 ms of their deadline, by
// themselves (os._exit(137), os._exit(0), a SIGKILL they send themselves) or by PyBox's kill,
// warm and cold; each receipt's account (mechanism, exit code, signal, program_end) and the exit
// code of `pybox exec` must agree with what the kernel recorded, and never claim a kill that
// came after the program's own end.
#include "tests/integration/harness.hpp"

#include "common/clock.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;

namespace {

// A process of a container, as the kernel told of it.
struct Seen {
    std::string container;
    int parent = 0;
    std::string comm;
    std::optional<std::uint32_t> wait_status;
    std::int64_t exit_ns = 0;
};

std::string read_line(const std::string& path)
{
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// The container of a process, from its cgroup file: the 64-hex id in its path, or "".
std::string container_of(int pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
    static const std::regex id("[0-9a-f]{64}");
    for (std::string line; std::getline(in, line);) {
        std::smatch found;
        if (std::regex_search(line, found, id)) return found.str();
    }
    return "";
}

int parent_of(int pid)
{
    const auto stat = read_line("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream rest(stat.substr(close + 2));
    std::string state;
    int parent = 0;
    rest >> state >> parent;
    return parent;
}

// The test's own proc connector reader, on a thread of its own.
class KernelObserver {
public:
    KernelObserver()
    {
        m_fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
        REQUIRE(m_fd >= 0);
        const int buffer = 8 * 1024 * 1024;
        ::setsockopt(m_fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer);
        sockaddr_nl address{};
        address.nl_family = AF_NETLINK;
        address.nl_groups = CN_IDX_PROC;
        REQUIRE(::bind(m_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
        // A netlink header, a connector message and its operation, laid out by hand: cn_msg ends
        // in a flexible array.
        alignas(nlmsghdr) char listen[NLMSG_LENGTH(sizeof(cn_msg) + sizeof(proc_cn_mcast_op))] = {};
        auto* header = reinterpret_cast<nlmsghdr*>(listen);
        header->nlmsg_len = sizeof listen;
        header->nlmsg_type = NLMSG_DONE;
        auto* message = static_cast<cn_msg*>(NLMSG_DATA(header));
        message->id = {CN_IDX_PROC, CN_VAL_PROC};
        message->len = sizeof(proc_cn_mcast_op);
        const proc_cn_mcast_op op = PROC_CN_MCAST_LISTEN;
        std::memcpy(message->data, &op, sizeof op);
        REQUIRE(::send(m_fd, &listen, sizeof listen, 0) == static_cast<ssize_t>(sizeof listen));
        // The processes of boxes that already exist (a warm box made before the test).
        for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
            const auto name = entry.path().filename().string();
            if (name.find_first_not_of("0123456789") != std::string::npos) continue;
            note_exec(std::stoi(name));
        }
        m_thread = std::thread([this] { read(); });
    }
    ~KernelObserver()
    {
        m_stop = true;
        m_thread.join();
        ::close(m_fd);
    }
    KernelObserver(const KernelObserver&) = delete;
    KernelObserver& operator=(const KernelObserver&) = delete;

    struct BoxEnds {
        std::optional<Seen> first;
        std::optional<Seen> program;
    };
    // The first process of `container` and its python3 child, once both have ended (waits up to 2 s).
    BoxEnds ends(const std::string& container)
    {
        BoxEnds found;
        within(std::chrono::seconds(2), [&] {
            std::lock_guard lock(m_mutex);
            found = {};
            int first_pid = 0;
            for (const auto& [pid, seen] : m_seen) {
                if (seen.container != container) continue;
                const auto parent = m_seen.find(seen.parent);
                if (parent == m_seen.end() || parent->second.container != container) {
                    found.first = seen;
                    first_pid = pid;
                }
            }
            for (const auto& [pid, seen] : m_seen)
                if (first_pid != 0 && seen.parent == first_pid && seen.container == container && seen.comm == "python3")
                    found.program = seen;
            return found.first && found.program && found.first->wait_status && found.program->wait_status;
        });
        return found;
    }
    bool lost() const { return m_lost; }

private:
    void note_exec(int pid)
    {
        auto container = container_of(pid);
        if (container.empty()) return;
        Seen seen{std::move(container), parent_of(pid), read_line("/proc/" + std::to_string(pid) + "/comm"),
                  std::nullopt, 0};
        std::lock_guard lock(m_mutex);
        m_seen[pid] = std::move(seen);
    }
    void note_exit(int pid, std::uint32_t status, std::int64_t ns)
    {
        std::lock_guard lock(m_mutex);
        const auto found = m_seen.find(pid);
        if (found == m_seen.end() || found->second.wait_status) return;
        found->second.wait_status = status;
        found->second.exit_ns = ns;
    }
    void read()
    {
        alignas(nlmsghdr) char buffer[8192];
        while (!m_stop) {
            pollfd ready{m_fd, POLLIN, 0};
            if (::poll(&ready, 1, 100) <= 0) continue;
            const ssize_t got = ::recv(m_fd, buffer, sizeof buffer, 0);
            if (got < 0) {
                if (errno == ENOBUFS) m_lost = true;
                continue;
            }
            // One event per message, one message per datagram, as the connector sends them.
            if (static_cast<std::size_t>(got) < sizeof(nlmsghdr) + sizeof(cn_msg) + sizeof(proc_event)) continue;
            {
                const auto* message = reinterpret_cast<const cn_msg*>(buffer + sizeof(nlmsghdr));
                const auto* event = reinterpret_cast<const proc_event*>(message->data);
                if (event->what == proc_event::PROC_EVENT_EXEC &&
                    event->event_data.exec.process_pid == event->event_data.exec.process_tgid)
                    note_exec(event->event_data.exec.process_pid);
                else if (event->what == proc_event::PROC_EVENT_EXIT &&
                         event->event_data.exit.process_pid == event->event_data.exit.process_tgid)
                    note_exit(event->event_data.exit.process_pid, event->event_data.exit.exit_code,
                              static_cast<std::int64_t>(event->timestamp_ns));
            }
        }
    }

    int m_fd = -1;
    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_lost{false};
    std::mutex m_mutex;
    std::map<int, Seen> m_seen;
    std::thread m_thread;
};

bool exited(std::uint32_t status) { return (status & 0x7f) == 0; }
int exit_code(std::uint32_t status) { return static_cast<int>((status >> 8) & 0xff); }
int signal_of(std::uint32_t status) { return static_cast<int>(status & 0x7f); }

// CLOCK_MONOTONIC nanoseconds of a receipt's RFC 3339 wall time, through the offset of the two
// clocks read together now (both are this host's).
std::int64_t mono_of_wall(const std::string& rfc3339)
{
    const auto wall_now = unix_nanoseconds(WallClock::now());
    const auto mono_now = monotonic_ns(MonoClock::now());
    return *parse_rfc3339_ns(rfc3339) - wall_now + mono_now;
}

struct Tally {
    std::map<std::string, int> by_mechanism;
    int judged = 0;
    int contradictions = 0;
};

// One run held against the kernel's record; counts what it finds.
void judge(const JsonRun& run, KernelObserver& observer, Tally& tally)
{
    const auto& receipt = run.receipt.as_object();
    const auto container = std::string(receipt.at("container_id").as_string());
    const auto& termination = receipt.at("observed").at("termination").as_object();
    const auto mechanism = std::string(termination.at("mechanism").as_string());
    const auto ends = observer.ends(container);
    INFO("container " << container << ": " << json::serialize(termination));
    REQUIRE(ends.first);
    REQUIRE(ends.program);
    const auto program = *ends.program->wait_status;
    ++tally.judged;
    // Counted by the termination codes the receipt gives, e.g. "EXITED+ENDED_BEFORE_KILL".
    std::string codes;
    for (const auto& explanation : receipt.at("explanations").as_array()) {
        const auto code = std::string(explanation.at("code").as_string());
        if (code != "OUTPUT_TRUNCATED" && code != "STREAM_ERROR") codes += (codes.empty() ? "" : "+") + code;
    }
    ++tally.by_mechanism[codes];
    bool agrees = true;
    // The receipt's record of the program's end is the kernel's own.
    const auto& program_end = termination.at("program_end");
    agrees = agrees && program_end.is_object();
    if (program_end.is_object()) {
        agrees = agrees && (exited(program) ? program_end.at("exit_code") == exit_code(program)
                                            : program_end.at("signal") == signal_of(program));
    }
    if (exited(program)) {
        // Ended by itself: never a kill, never 124.
        agrees = agrees && mechanism == "TARGET_EXIT_OBSERVED" && termination.at("exit_code") == exit_code(program) &&
                 run.process.exit_code == exit_code(program) && termination.at("signal").is_null();
    } else if (mechanism == "DEADLINE_KILL") {
        // PyBox's kill: sent before the program's end, and the box's first process killed too.
        const auto sent = termination.at("deadline_kill_sent_at");
        agrees = agrees && signal_of(program) == 9 && run.process.exit_code == 124 && sent.is_string() &&
                 ends.first->wait_status && !exited(*ends.first->wait_status) &&
                 mono_of_wall(std::string(sent.as_string())) <= ends.program->exit_ns + 1'000'000;
    } else {
        agrees = agrees && run.process.exit_code != 124;
    }
    // A kill said to come after the program's own end did.
    for (const auto& explanation : receipt.at("explanations").as_array())
        if (explanation.at("code") == "ENDED_BEFORE_KILL" && termination.at("deadline_kill_sent_at").is_string())
            agrees = agrees && ends.program->exit_ns <
                                   mono_of_wall(std::string(termination.at("deadline_kill_sent_at").as_string())) + 1'000'000;
    if (!agrees) {
        ++tally.contradictions;
        UNSCOPED_INFO("contradiction: " << json::serialize(termination) << " kernel program status " << program
                                        << " box status " << ends.first->wait_status.value_or(0));
    }
}

}  // namespace

TEST_CASE("Near the deadline, every receipt's account of the program's end agrees with the kernel's own record")
{
    KernelObserver observer;
    Tally tally;
    // Deadline 0.3 s: programs that end 20 ms before to 20 ms after it, every 2 ms, four ways
    // (each way cold at every fourth offset, a different one per way), in the suite daemon's warm
    // boxes and in a side daemon's cold ones, and programs that never end by themselves.
    SideDaemon cold("near-deadline-cold", json::object{{"warm_boxes", 0}});
    const char* const endings[] = {"os._exit(137)", "os._exit(0)", "os.kill(os.getpid(), 9)",
                                   "print('done', flush=True); raise SystemExit(3)"};
    const std::vector<std::string> options{"--timeout", "0.3"};
    int runs = 0;
    for (int offset_ms = -20; offset_ms <= 20; offset_ms += 2) {
        for (int way = 0; way < 4; ++way) {
            const std::string program = "import os, time\ntime.sleep(" + std::to_string(0.3 + offset_ms / 1000.0) +
                                        ")\n" + endings[way] + "\n";
            const bool in_cold = (offset_ms / 2 + 10 + way) % 4 == 3;
            judge(in_cold ? cold.run_json(program, options) : run_json(program, options), observer, tally);
            ++runs;
        }
    }
    for (int i = 0; i < 20; ++i) {
        judge(i % 4 == 3 ? cold.run_json("while True: pass\n", options) : run_json("while True: pass\n", options),
              observer, tally);
        ++runs;
    }
    std::string counts;
    for (const auto& [mechanism, count] : tally.by_mechanism) counts += mechanism + " " + std::to_string(count) + ", ";
    WARN("near-deadline series: " << tally.judged << " runs judged against the kernel: " << counts
                                  << tally.contradictions << " contradictions");
    CHECK_FALSE(observer.lost());
    CHECK(tally.judged == runs);
    CHECK(tally.contradictions == 0);
}

TEST_CASE("A child's OOM kill followed by the program's own exit 137 is that exit, with the OOM kill recorded")
{
    KernelObserver observer;
    const auto run = run_json(
        "import os\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    b = bytearray(300 * 1024 * 1024)\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "os._exit(137)\n");
    const auto& termination = run.receipt.at("observed").at("termination");
    CHECK(termination.at("mechanism") == "TARGET_EXIT_OBSERVED");
    CHECK(termination.at("exit_code") == 137);
    CHECK(termination.at("signal").is_null());
    CHECK(run.process.exit_code == 137);
    bool oom_in_box = false;
    for (const auto& explanation : run.receipt.at("explanations").as_array())
        oom_in_box = oom_in_box || explanation.at("code") == "OOM_KILL_IN_BOX";
    CHECK(oom_in_box);
    const auto ends = observer.ends(std::string(run.receipt.at("container_id").as_string()));
    REQUIRE(ends.program);
    CHECK(exited(*ends.program->wait_status));
}
