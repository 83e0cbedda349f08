// System mode (docs/install.md): a root `pyboxd --system` serves the members of the pybox group
// on a 0660 socket; the peer uid decides whose run it is. Real users are made for the test
// (useradd, kept between runs): two members and one outsider, each running the real client
// through setpriv with a bare environment, as a user's shell would.
#include "tests/integration/harness.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/unfinished_command.hpp"

#include "common/clock.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <future>
#include <thread>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr const char* k_member_a = "pybox-it-alice";
constexpr const char* k_member_b = "pybox-it-bob";
constexpr const char* k_outsider = "pybox-it-mallory";

void run_ok(const std::vector<std::string>& argv)
{
    const auto result = run_to_end(argv);
    INFO(argv[0] << ": " << result.output);
    REQUIRE(result.exit_code == 0);
}

// Makes the pybox group and a user (with its own group) unless they exist.
void ensure_user(const std::string& name, bool member)
{
    run_ok({"/usr/sbin/groupadd", "-f", "--system", "pybox"});
    const auto known = run_process({"/usr/bin/id", "-u", name});
    REQUIRE(known.has_value());
    if (known->exit_code != 0)
        run_ok({"/usr/sbin/useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin",
                name});
    run_ok({"/usr/sbin/usermod", "-G", member ? "pybox" : "", name});
}

std::uint32_t uid_of(const std::string& name)
{
    const auto id = run_process({"/usr/bin/id", "-u", name});
    REQUIRE(id.has_value());
    REQUIRE(id->exit_code == 0);
    return static_cast<std::uint32_t>(std::stoul(id->output));
}

// The system daemon of the test: its socket in a folder anyone may traverse, with a copy of
// the client there that every user may run.
class SystemDaemon {
public:
    SystemDaemon()
        : m_socket_dir(runtime_home().string() + "-system-socket"),
          m_daemon("system", json::object{{"box_expiry_s", 2}, {"settle_after_expiry_s", 1}, {"sweep_interval_s", 1}},
                   [this](const fs::path&) { prepare_socket_dir(); }, SideDaemonStart{{"--system"}, socket()})
    {
    }

    fs::path socket() const { return m_socket_dir / "pyboxd.sock"; }
    SideDaemon& daemon() { return m_daemon; }

    // `pybox args...` as `user`, with only PYBOX_SYSTEM_SOCKET and a HOME without a daemon.
    ProcessResult pybox_as(const std::string& user, const std::vector<std::string>& args,
                           const std::string& input = "") const
    {
        std::vector<std::string> argv{"/usr/bin/setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups",
                                      "/usr/bin/env",      "-i",
                                      "PYBOX_SYSTEM_SOCKET=" + socket().string(), "HOME=/nonexistent",
                                      (m_socket_dir / "pybox").string()};
        argv.insert(argv.end(), args.begin(), args.end());
        ProcessOptions options;
        options.input = input;
        options.separate_stderr = true;
        options.timeout = 120s;
        return run_to_end(argv, options);
    }

    json::value run_as(const std::string& user, const std::string& program) const
    {
        const auto run = pybox_as(user, {"exec", "-", "--json"}, program);
        INFO("stderr: " << run.error_output);
        REQUIRE(run.exit_code == 0);
        return json::parse(run.output);
    }

    json::value attempts_as(const std::string& user) const
    {
        const auto listed = pybox_as(user, {"attempts", "--json"});
        INFO("stderr: " << listed.error_output);
        REQUIRE(listed.exit_code == 0);
        return json::parse(listed.output);
    }

private:
    void prepare_socket_dir()
    {
        fs::remove_all(m_socket_dir);
        fs::create_directories(m_socket_dir);
        fs::permissions(m_socket_dir, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec |
                                          fs::perms::group_read | fs::perms::others_read);
        fs::copy_file(pybox::test::client_path(), m_socket_dir / "pybox");
        fs::permissions(m_socket_dir / "pybox", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                                    fs::perms::others_read | fs::perms::others_exec);
    }

    fs::path m_socket_dir;
    SideDaemon m_daemon;
};

// The labels the engine saw on a box when it was created (its event stream).
json::object created_labels(const std::string& container_id, std::int64_t since)
{
    for (const auto& event : engine_events(container_id, since, unix_seconds(WallClock::now()) + 1))
        if (event.at("Action") == "create") {
            json::object labels = event.at("Actor").at("Attributes").as_object();
            return labels;
        }
    FAIL("no create event for " << container_id);
    return {};
}

}  // namespace

TEST_CASE("System mode: a member of the pybox group runs the seed's first program; its box carries its uid")
{
    ensure_user(k_member_a, true);
    SystemDaemon system;
    struct stat info{};
    REQUIRE(::stat(system.socket().c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0660);

    const auto since = unix_seconds(WallClock::now()) - 1;
    const auto receipt = system.run_as(k_member_a, "print(6*7)\n");
    CHECK(receipt.at("capture").at("stdout") == "42\n");
    CHECK(receipt.at("observed").at("termination").at("exit_code") == 0);
    CHECK(receipt.at("cleanup").at("status") == "REMOVED");
    const auto labels = created_labels(std::string(receipt.at("container_id").as_string()), since);
    CHECK(labels.at("pybox.user") == json::value(std::to_string(uid_of(k_member_a))));
    CHECK(labels.at("pybox.owner") == receipt.at("identity").at("installation_id"));
}

TEST_CASE("System mode: a user outside the pybox group is refused, and a member may not manage the engine")
{
    ensure_user(k_member_a, true);
    ensure_user(k_outsider, false);
    SystemDaemon system;
    // The outsider is kept out by the socket's mode already, and told why ...
    const auto kept_out = system.pybox_as(k_outsider, {"exec", "-"}, "print('in')\n");
    CHECK(kept_out.exit_code != 0);
    CHECK(kept_out.output.empty());
    CHECK_THAT(kept_out.error_output, Catch::Contains("permission denied") && Catch::Contains("pybox group"));
    // ... and the daemon's own check is proven by loosening the socket, as a careless
    // administrator might.
    fs::permissions(system.socket(), fs::perms::all);
    const auto refused = system.pybox_as(k_outsider, {"exec", "-"}, "print('in')\n");
    CHECK(refused.exit_code != 0);
    CHECK(refused.output.empty());
    CHECK_THAT(refused.error_output, Catch::Contains("only root and the members of the pybox group"));

    for (const std::vector<std::string>& command : {std::vector<std::string>{"vm", "stop"},
                                                   std::vector<std::string>{"setup"}}) {
        const auto managed = system.pybox_as(k_member_a, command);
        INFO(command[0]);
        CHECK(managed.exit_code != 0);
        CHECK_THAT(managed.error_output, Catch::Contains("only root manages"));
    }
    // The engine still runs: the member's next run works.
    CHECK(system.run_as(k_member_a, "print('still up')\n").at("capture").at("stdout") == "still up\n");
}

TEST_CASE("System mode: two users' runs and the sweep of a lost run never touch the other user's boxes or records")
{
    ensure_user(k_member_a, true);
    ensure_user(k_member_b, true);
    SystemDaemon system;
    const auto alice = uid_of(k_member_a), bob = uid_of(k_member_b);

    // Alice's run is lost with the daemon (killed mid-run); Bob's runs go on around it.
    auto lost = std::async(std::launch::async, [&] {
        return system.pybox_as(k_member_a, {"exec", "-", "--timeout", "25"}, "import time\ntime.sleep(20)\n");
    });
    json::value during;
    REQUIRE(within(15s, [&] {
        during = system.attempts_as(k_member_a);
        return !during.at("unsettled").as_array().empty() &&
               !during.at("unsettled").as_array()[0].at("container_id").as_string().empty();
    }));
    const auto& note = during.at("unsettled").as_array()[0];
    CHECK(note.at("owner_uid") == alice);
    const std::string alice_run(note.at("run_id").as_string());
    // Bob sees nothing of Alice's run; root sees it.
    CHECK(system.attempts_as(k_member_b).at("unsettled").as_array().empty());
    CHECK(system.attempts_as("root").at("unsettled").as_array().size() == 1);

    system.daemon().kill_hard();
    (void)lost.get();
    system.daemon().restart();
    const auto bob_receipt = system.run_as(k_member_b, "print('bob')\n");
    CHECK(bob_receipt.at("capture").at("stdout") == "bob\n");

    // The sweep removes Alice's box and journals the run as hers; Bob's records never show it.
    json::value settled;
    REQUIRE(within(30s, [&] {
        settled = system.attempts_as(k_member_a);
        return !settled.at("settled").as_array().empty();
    }));
    const auto& entry = settled.at("settled").as_array()[0];
    CHECK(entry.at("run_id") == json::value(alice_run));
    CHECK(entry.at("owner_uid") == alice);
    CHECK(entry.at("box") == "REMOVED_BY_SWEEP");
    const auto bobs = system.attempts_as(k_member_b);
    for (const auto& settled_entry : bobs.at("settled").as_array()) CHECK(settled_entry.at("owner_uid") == bob);
    CHECK(bobs.at("unsettled").as_array().empty());
}
