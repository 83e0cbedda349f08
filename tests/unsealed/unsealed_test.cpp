// `pybox exec --unsealed` end to end (ctest `unsealed`; docs/unsealed.md): the real client and the
// host's /usr/bin/python3, no daemon and no engine. The runner refuses root, so when the suite
// runs as root the client runs as the user pybox-unsealed-test (made once, kept), through setpriv
// with a bare environment; that user runs nothing else, so "nothing left running" is checked by
// counting its processes.
#include "common/limited_process.hpp"
#include "common/process.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/unfinished_command.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using pybox::ProcessOptions;
using pybox::ProcessResult;
using pybox::run_process;
using pybox::test::run_to_end;

constexpr const char* k_user = "pybox-unsealed-test";

void run_ok(const std::vector<std::string>& argv)
{
    const auto result = run_process(argv);
    REQUIRE(result.has_value());
    INFO(argv[0] << ": " << result->output);
    REQUIRE(result->exit_code == 0);
}

bool as_root() { return pybox::running_as_root(); }

// The uid the client runs as: the test user's when the suite is root (made here unless it exists).
unsigned run_uid()
{
    static const unsigned uid = [] {
        if (!as_root()) return pybox::current_real_uid();
        const auto known = run_process({"/usr/bin/id", "-u", k_user});
        REQUIRE(known.has_value());
        if (known->exit_code != 0)
            run_ok({"/usr/sbin/useradd", "--system", "--user-group", "--no-create-home", "--shell",
                    "/usr/sbin/nologin", k_user});
        const auto id = run_process({"/usr/bin/id", "-u", k_user});
        REQUIRE(id.has_value());
        return static_cast<unsigned>(std::stoul(id->output));
    }();
    return uid;
}

// A PYBOX_HOME without a daemon, readable by the user the client runs as; removed at exit.
struct RemovedAtExit {
    fs::path path;
    ~RemovedAtExit()
    {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

fs::path home()
{
    static const RemovedAtExit folder{[] {
        const auto created = pybox::make_temporary_folder(fs::temp_directory_path(), "pybox-unsealed-home-");
        REQUIRE(created.has_value());
        fs::permissions(*created, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                      fs::perms::others_read | fs::perms::others_exec);
        return *created;
    }()};
    return folder.path;
}

void write_config(const std::string& text)
{
    std::ofstream(home() / "config.json") << text;
    fs::permissions(home() / "config.json", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                                fs::perms::others_read);
}

// `pybox args...` with `program` on stdin, as the test user when root, in a bare environment.
ProcessResult run_client(const std::vector<std::string>& args, const std::string& program)
{
    std::vector<std::string> argv;
    if (as_root()) {
        run_uid();
        argv = {"/usr/bin/setpriv", "--reuid=" + std::string(k_user), "--regid=" + std::string(k_user),
                "--clear-groups"};
    }
    argv.insert(argv.end(), {"/usr/bin/env", "-i", "PYBOX_HOME=" + home().string(), "HOME=/nonexistent",
                             pybox::test::client_path()});
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessOptions options;
    options.input = program;
    options.separate_stderr = true;
    options.timeout = 60s;
    options.max_output = 4 << 20;
    return run_to_end(argv, options);
}

struct UnsealedRun {
    ProcessResult process;
    json::value receipt;
};

UnsealedRun run_json(const std::string& program, const std::vector<std::string>& extra = {})
{
    std::vector<std::string> args{"exec", "-", "--unsealed", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto process = run_client(args, program);
    INFO("stderr: " << process.error_output);
    REQUIRE_FALSE(process.output.empty());
    auto receipt = json::parse(process.output);
    // Every unsealed run: marked so, and its working folder gone.
    CHECK(receipt.at("sealed") == false);
    CHECK(receipt.at("isolation") == "none");
    const auto folder = std::string(receipt.at("unsealed").at("working_folder").as_string());
    CHECK(receipt.at("unsealed").at("working_folder_removed") == true);
    CHECK_FALSE(fs::exists(folder));
    return {std::move(process), std::move(receipt)};
}

bool has_code(const json::value& receipt, const std::string& code)
{
    for (const auto& explanation : receipt.at("explanations").as_array())
        if (explanation.at("code") == code.c_str()) return true;
    return false;
}

bool gone(int pid)
{
    for (int i = 0; i < 100 && pybox::process_alive(pid); ++i) std::this_thread::sleep_for(10ms);
    return !pybox::process_alive(pid);
}

// Live (not zombie) processes whose real uid is the test user's.
int processes_left()
{
    const auto listed = run_process({"/usr/bin/ps", "-U", std::to_string(run_uid()), "-o", "stat=", "-o", "pid="});
    REQUIRE(listed.has_value());
    int live = 0;
    std::istringstream lines(listed->output);
    for (std::string line; std::getline(lines, line);)
        if (!line.empty() && line[0] != 'Z') ++live;
    return live;
}

}  // namespace

TEST_CASE("Hello runs with the host's python and the short view says UNSEALED first")
{
    const auto run = run_json("print('hello')\n");
    CHECK(run.process.exit_code == 0);
    CHECK(run.receipt.at("capture").at("stdout") == "hello\n");
    CHECK(run.receipt.at("configured").at("command").as_array().front() == "/usr/bin/python3");
    CHECK(run.receipt.at("configured").at("network") == "not blocked");
    CHECK(has_code(run.receipt, "UNSEALED_RUN"));

    const auto shown = run_client({"exec", "-", "--unsealed"}, "print('hello')\n");
    CHECK(shown.exit_code == 0);
    CHECK(shown.output == "hello\n");
    const auto view = shown.error_output.substr(shown.error_output.find_first_not_of('\n'));
    CHECK(view.substr(0, view.find('\n')).find("UNSEALED") != std::string::npos);
}

TEST_CASE("A traceback exits 1 and its stderr is kept")
{
    const auto run = run_json("raise ValueError('boom')\n");
    CHECK(run.process.exit_code == 1);
    CHECK(run.receipt.at("observed").at("termination").at("exit_code") == 1);
    CHECK(std::string(run.receipt.at("capture").at("stderr").as_string()).find("ValueError: boom") !=
          std::string::npos);
}

TEST_CASE("An endless loop is killed at the deadline together with its child processes")
{
    const auto run = run_json("import subprocess, sys\n"
                              "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
                              "print(child.pid, flush=True)\n"
                              "while True: pass\n",
                              {"--timeout", "1"});
    CHECK(run.process.exit_code == 124);
    const auto& termination = run.receipt.at("observed").at("termination");
    CHECK(termination.at("mechanism") == "DEADLINE_KILL");
    CHECK(termination.at("signal") == 9);
    CHECK(termination.at("deadline_kill_sent") == true);
    const int child = std::stoi(std::string(run.receipt.at("capture").at("stdout").as_string()));
    CHECK(gone(child));
    CHECK(processes_left() == 0);
}

TEST_CASE("One megabyte of output is cut at the cap and flagged")
{
    const auto run = run_json("import sys\nsys.stdout.write('x' * 1_000_000)\n");
    CHECK(run.process.exit_code == 0);
    const auto& capture = run.receipt.at("capture");
    CHECK(capture.at("stdout_bytes") == 1'000'000);
    CHECK(capture.at("stdout_bytes_kept") == 65'536);
    CHECK(capture.at("stdout_truncated") == true);
    CHECK(capture.at("output_complete") == false);
    CHECK(has_code(run.receipt, "OUTPUT_TRUNCATED"));
}

TEST_CASE("A fork bomb is stopped by the process limit and nothing is left running")
{
    // Children that wait: the parent's forks fail once the limit is reached.
    const auto counted = run_json("import os, time\n"
                                  "n = 0\n"
                                  "try:\n"
                                  "    while True:\n"
                                  "        if os.fork() == 0:\n"
                                  "            time.sleep(60)\n"
                                  "            os._exit(0)\n"
                                  "        n += 1\n"
                                  "except OSError as e:\n"
                                  "    print(n, type(e).__name__)\n",
                                  {"--timeout", "10"});
    CHECK(counted.process.exit_code == 0);
    const auto& limits = counted.receipt.at("unsealed").at("limits");
    const auto allowed = limits.at("processes").as_int64() - limits.at("user_processes_at_start").as_int64();
    const std::string said(counted.receipt.at("capture").at("stdout").as_string());
    CHECK(said.find("BlockingIOError") != std::string::npos);
    CHECK(std::stol(said) < allowed);
    CHECK(counted.receipt.at("unsealed").at("group_killed_after_exit") == true);
    CHECK(has_code(counted.receipt, "PROCESSES_LEFT_KILLED"));
    CHECK(processes_left() == 0);

    // Every process forking for ever: held at the limit until the deadline kills the group.
    const auto bomb = run_json("import os\n"
                               "while True:\n"
                               "    try:\n"
                               "        os.fork()\n"
                               "    except OSError:\n"
                               "        pass\n",
                               {"--timeout", "2"});
    CHECK(bomb.process.exit_code == 124);
    CHECK(processes_left() == 0);
}

TEST_CASE("A plain exec with no daemon fails as before and never runs unsealed")
{
    const auto run = run_client({"exec", "-"}, "print('hello')\n");
    CHECK(run.exit_code == 125);
    CHECK(run.output.empty());
    CHECK(run.error_output.find("UNSEALED") == std::string::npos);
    CHECK(run.error_output.find("hello") == std::string::npos);
    const auto json_run = run_client({"exec", "-", "--json"}, "print('hello')\n");
    CHECK(json_run.exit_code == 125);
    CHECK(json_run.output.empty());
}

TEST_CASE("config.json's interpreter must be an absolute path to an executable")
{
    write_config(R"({"unsealed_python": "python3"})");
    auto run = run_client({"exec", "-", "--unsealed"}, "print(1)\n");
    CHECK(run.exit_code == 125);
    CHECK(run.error_output.find("absolute path") != std::string::npos);
    // config.json itself: a file, mode 0644, not executable.
    write_config(R"({"unsealed_python": ")" + (home() / "config.json").string() + R"("})");
    run = run_client({"exec", "-", "--unsealed"}, "print(1)\n");
    CHECK(run.exit_code == 125);
    CHECK(run.error_output.find("not an executable file") != std::string::npos);
    write_config(R"({"unsealed_python": "/usr/bin/python3"})");
    CHECK(run_client({"exec", "-", "--unsealed"}, "print(1)\n").exit_code == 0);
    fs::remove(home() / "config.json");
}

TEST_CASE("Unsealed runs are refused as root")
{
    if (!as_root()) return;  // only a root suite can show it
    ProcessOptions options;
    options.input = "print(1)\n";
    options.separate_stderr = true;
    const auto run = run_to_end({"/usr/bin/env", "-i", "PYBOX_HOME=" + home().string(), pybox::test::client_path(), "exec",
                                 "-", "--unsealed"},
                                options);
    CHECK(run.exit_code == 125);
    CHECK(run.output.empty());
    CHECK(run.error_output.find("refused as root") != std::string::npos);
}

TEST_CASE("A process that starts a session of its own outlives the run: the documented limit, said in the receipt")
{
    // It keeps the output open, so the run waits for it until the deadline and says so.
    const auto run = run_json("import os, time\n"
                              "if os.fork() == 0:\n"
                              "    os.setsid()\n"
                              "    print(os.getpid(), flush=True)\n"
                              "    time.sleep(30)\n"
                              "    os._exit(0)\n"
                              "time.sleep(0.2)\n",
                              {"--timeout", "1"});
    CHECK(run.process.exit_code == 0);
    const int escaped = std::stoi(std::string(run.receipt.at("capture").at("stdout").as_string()));
    CHECK(pybox::process_alive(escaped));
    CHECK(run.receipt.at("capture").at("output_complete") == false);
    CHECK(has_code(run.receipt, "STREAM_ERROR"));
    pybox::send_signal(escaped, pybox::k_signal_kill);
    CHECK(gone(escaped));
}
