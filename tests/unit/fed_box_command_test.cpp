// The fed box command (a Kubernetes box's first process), run for real on this host: always
// box-like (tests/support/box_like.hpp), PID 1 of a PID namespace of its own, so that its
// kill(-1) reaches only that namespace's processes, and its inner command is PID 1 as in a Pod.
#include "proto/box_policy.hpp"

#include "common/process.hpp"
#include "tests/support/box_like.hpp"

#include "util/text.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

using namespace pybox::proto;
using pybox::util::hex_encode;

namespace {

// The file size limit the tests' fed commands set: 8 of dash's 512-byte blocks.
constexpr std::int64_t k_file_bytes = 4096;

// The fed command box-like, around `inner`, with `input` on stdin, then stdin closed.
pybox::ProcessResult run_fed(const std::vector<std::string>& inner, const std::string& input)
{
    return pybox::test::run_box_like(fed_box_command(inner, k_file_bytes), input);
}

// Runs `argv` (its first element found on PATH by perl) with `input` on a stdin that stays open
// until it ends, as an attach on Kubernetes 1.20 leaves it; exits with its status (128 + N for
// a signal N).
constexpr const char* k_hold_stdin_open = R"PL(my $input = shift;
pipe(my $r, my $w) or die;
defined(my $pid = fork) or die;
if (!$pid) { open(STDIN, '<&', $r) or die; close $w; exec @ARGV; exit 127 }
close $r;
syswrite($w, $input);
waitpid($pid, 0);
exit(($? & 127) ? 128 + ($? & 127) : $? >> 8);
)PL";

// The fed command around `inner` after `prefix` (box-like), with `input` on a stdin that is
// never closed, and its termination log at `termination_log`.
pybox::ProcessResult run_fed_stdin_open(const std::vector<std::string>& inner, const std::string& input,
                                        const std::vector<std::string>& prefix = pybox::test::k_box_like,
                                        std::string_view termination_log = k_fed_termination_log)
{
    std::vector<std::string> argv = {"/usr/bin/perl", "-e", k_hold_stdin_open, input};
    argv.insert(argv.end(), prefix.begin(), prefix.end());
    const auto command = fed_box_command(inner, k_file_bytes, termination_log);
    argv.insert(argv.end(), command.begin(), command.end());
    auto ran = pybox::test::run_with_input(argv, "");
    INFO("stderr: " << ran.error_output);
    REQUIRE_FALSE(ran.timed_out);
    return ran;
}

// The box's stdout after the feeder's environment report, which must come first, whole.
std::string program_output(const pybox::ProcessResult& ran)
{
    const auto newline = ran.output.find('\n');
    REQUIRE(ran.output.starts_with(std::string(k_fed_environment_marker)));
    REQUIRE(newline != std::string::npos);
    return ran.output.substr(newline + 1);
}


// An inner command that prints its stdin, then "end".
const std::vector<std::string> k_cat_then_end = {"sh", "-c", "cat; echo end"};

const std::string k_nonce = "0123456789abcdef0123456789abcdef";

// A termination log of its own per test, holding "untouched\n" at first; removed at the end.
struct TerminationLog {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("pybox-unit-termination-log-" +
                                  std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    TerminationLog() { std::ofstream(path) << "untouched\n"; }
    ~TerminationLog() { std::filesystem::remove(path); }
    TerminationLog(const TerminationLog&) = delete;
    TerminationLog& operator=(const TerminationLog&) = delete;
    std::string text() const
    {
        std::ifstream in(path);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
};

// An inner command (PID 1, which the kill cannot reach) that reads its stdin, sleeps until the
// kill ends the sleep, then prints the first line of `log` with its shell's builtins (a command
// it started would be killed too) and exits 7.
std::vector<std::string> print_log_after_kill(const TerminationLog& log)
{
    return {"sh", "-c", "cat >/dev/null; sleep 30; read -r line < '" + log.path.string() + "'; echo \"$line\"; exit 7"};
}

}  // namespace

TEST_CASE("A fed frame is the program's byte count in decimal, a newline, then the program", "[fed_box]")
{
    CHECK(fed_program_frame("") == "0\n");
    CHECK(fed_program_frame("hello\n") == "6\nhello\n");
    CHECK(fed_program_frame(std::string("a\0b", 3)) == std::string("3\na\0b", 5));
    CHECK(fed_program_frame(std::string(12345, 'x')).starts_with("12345\nxxx"));
}

TEST_CASE("The fed box command sets the policy's limits in sh, then runs its Perl feeder with the inner command after it",
          "[fed_box]")
{
    const BoxPolicy defaults;
    const auto command = fed_box_command({"inner", "-x"}, defaults.tmpfs_bytes);
    REQUIRE(command.size() == 6);
    CHECK(command[0] == "sh");
    CHECK(command[1] == "-c");
    CHECK(command[2] == "ulimit -n " + std::to_string(defaults.open_files) + " && ulimit -c " +
                           std::to_string(defaults.core_dump_bytes) + " && ulimit -f " +
                           std::to_string(defaults.tmpfs_bytes / 512) + " && unset PWD && exec perl -e \"$0\" \"$@\"");
    CHECK(command[4] == "inner");
    CHECK(command[5] == "-x");
}

TEST_CASE("A fed box's inner command reads exactly the program, then end of file, with 128 open files and no core "
          "dumps, soft and hard",
          "[fed_box]")
{
    const auto ran = run_fed({"sh", "-c", "cat; ulimit -n; ulimit -Hn; ulimit -c; ulimit -Hc"},
                             fed_program_frame("hello\n") + "extra");
    CHECK(program_output(ran) == "hello\n128\n128\n0\n0\n");
    CHECK(ran.exit_code == 0);
}

TEST_CASE("A fed box's files stop growing at its file size limit, soft and hard", "[fed_box]")
{
    const auto ran = run_fed({"sh", "-c", "cat > /dev/null; ulimit -f; ulimit -Hf; head -c 20000 /dev/zero > \"$0\" 2> /dev/null; "
                                          "wc -c < \"$0\"; rm -f \"$0\"",
                              (std::filesystem::temp_directory_path() / "pybox-fed-fsize").string()},
                             fed_program_frame(""));
    // k_file_bytes is 8 blocks of 512 bytes.
    CHECK(program_output(ran) == "8\n8\n4096\n");
}

TEST_CASE("A fed box's first stdout line reports, before the program's output, exactly the environment the program "
          "gets",
          "[fed_box]")
{
    // The box-like environment and two more variables, one empty and one with bytes that need
    // escaping; sh's PWD is not among them. The program prints its own environment as the
    // report spells it.
    auto prefix = pybox::test::k_box_like;
    prefix.insert(prefix.end(), {"EMPTY=", std::string("ZZ=a b=c\x01\xff")});
    const auto ran = run_fed_stdin_open(box_command(2.0),
                                        fed_program_frame("import os\n"
                                                          "print(' '.join(k.hex() + '=' + v.hex() "
                                                          "for k, v in sorted(os.environb.items())))\n"),
                                        prefix);
    const std::string expected = hex_encode("EMPTY") + "= " + hex_encode("HOME") + "=" + hex_encode("/tmp") + " " +
                                 hex_encode("HOSTNAME") + "=" + hex_encode("pybox") + " " + hex_encode("LANG") + "=" +
                                 hex_encode("C.UTF-8") + " " + hex_encode("PATH") + "=" +
                                 hex_encode("/usr/local/bin:/usr/bin:/bin") + " " + hex_encode("ZZ") + "=" +
                                 hex_encode(std::string("a b=c\x01\xff"));
    CHECK(ran.output == std::string(k_fed_environment_marker) + " " + expected + "\n" + expected + "\n");
    CHECK(ran.exit_code == 0);
}

TEST_CASE("A fed box's environment report is the marker alone for an empty environment", "[fed_box]")
{
    auto prefix = pybox::test::k_box_like;
    const auto env = std::find(prefix.begin(), prefix.end(), "-i");
    REQUIRE(env != prefix.end());
    prefix.erase(env + 1, prefix.end());
    // PATH is gone: the inner command is named by its path.
    const auto ran = run_fed_stdin_open({"/bin/cat"}, fed_program_frame("hello\n"), prefix);
    CHECK(ran.output == std::string(k_fed_environment_marker) + "\nhello\n");
}

TEST_CASE("A kill byte inside the program is the program's", "[fed_box]")
{
    const std::string program(1, k_fed_kill_byte);
    const auto ran = run_fed(k_cat_then_end, fed_program_frame(program + "\n" + program));
    CHECK(program_output(ran) == program + "\n" + program + "end\n");
    CHECK(ran.exit_code == 0);
}

TEST_CASE("A malformed fed header gives the inner command an empty stdin, and no environment report", "[fed_box]")
{
    for (const auto* input : {"abc\nhello", "", "5", "\nhello", "-5\nhello", " 5\nhello", "5 \nhello", "5\rhello",
                              "1234567890123\nhello"}) {
        INFO("input: " << input);
        const auto ran = run_fed(k_cat_then_end, input);
        CHECK(ran.output == "end\n");
        CHECK(ran.exit_code == 0);
    }
}

TEST_CASE("A fed header of twelve digits is read, leading zeros and all", "[fed_box]")
{
    const auto ran = run_fed(k_cat_then_end, "000000000005\nhello, and more");
    CHECK(program_output(ran) == "helloend\n");
}

TEST_CASE("A fed box whose stdin ends before the frame's byte count gives the inner what arrived, then end of file",
          "[fed_box]")
{
    const auto ran = run_fed(k_cat_then_end, "10\nhello");
    CHECK(program_output(ran) == "helloend\n");
    CHECK(ran.exit_code == 0);
}

TEST_CASE("A fed box's program ends the box by itself while the real stdin stays open", "[fed_box]")
{
    const auto ran = run_fed_stdin_open(box_command(10.0), fed_program_frame("import sys\nprint(6*7, repr(sys.stdin.read()))\n"));
    CHECK(program_output(ran) == "42 ''\n");
    CHECK(ran.exit_code == 0);
}

TEST_CASE("The kill byte ends every process of a fed box but PID 1, including those started after it", "[fed_box]")
{
    // The inner shell is PID 1: the kill byte reaches cat or the sleep that follows it, and the
    // shell, which it cannot reach, ends with 128 + 9.
    const auto started = std::chrono::steady_clock::now();
    const auto ran = run_fed_stdin_open({"sh", "-c", "cat >/dev/null; sleep 30"},
                                        fed_program_frame("hello\n") + "extra" + k_fed_kill_byte);
    CHECK(ran.exit_code == 137);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
}

TEST_CASE("The kill byte ends a fed cold box's program with 137, as a kill through Docker does", "[fed_box]")
{
    const auto started = std::chrono::steady_clock::now();
    const auto ran = run_fed_stdin_open(box_command(10.0), fed_program_frame("import time\ntime.sleep(30)\n") +
                                                               k_fed_kill_byte);
    CHECK(ran.exit_code == 137);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
}

TEST_CASE("A kill line is the kill byte, the nonce and a newline; its record names the nonce", "[fed_box]")
{
    CHECK(fed_kill_line(k_nonce) == k_fed_kill_byte + k_nonce + "\n");
    CHECK(fed_kill_record(k_nonce) == "pybox-kill " + k_nonce + "\n");
}

TEST_CASE("On a kill line the feeder records the nonce in the termination log before it kills", "[fed_box]")
{
    // The inner shell reads the log only once the kill ended its sleep: the record was there.
    const TerminationLog log;
    const auto started = std::chrono::steady_clock::now();
    const auto ran = run_fed_stdin_open(print_log_after_kill(log), fed_program_frame("hello\n") + "extra" +
                                                                       fed_kill_line(k_nonce),
                                        pybox::test::k_box_like, log.path.string());
    CHECK(program_output(ran) == "pybox-kill " + k_nonce + "\n");
    CHECK(ran.exit_code == 7);
    CHECK(log.text() == fed_kill_record(k_nonce));
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
}

TEST_CASE("Bytes after a kill line do not spoil its record", "[fed_box]")
{
    const TerminationLog log;
    const auto ran = run_fed_stdin_open(print_log_after_kill(log),
                                        fed_program_frame("hello\n") + fed_kill_line(k_nonce) + "trailing bytes",
                                        pybox::test::k_box_like, log.path.string());
    CHECK(program_output(ran) == "pybox-kill " + k_nonce + "\n");
    CHECK(log.text() == fed_kill_record(k_nonce));
}

TEST_CASE("A malformed kill line still kills, and the feeder records nothing", "[fed_box]")
{
    for (const std::string& after_byte : {std::string("xyz\n"), k_nonce.substr(1) + "\n", std::string(32, 'A') + "\n",
                                         k_nonce + "x", k_nonce, k_nonce.substr(0, 16) + "\n" + k_nonce.substr(16)}) {
        INFO("after the kill byte: " << after_byte);
        const TerminationLog log;
        const auto started = std::chrono::steady_clock::now();
        const auto ran = run_fed_stdin_open({"sh", "-c", "cat >/dev/null; sleep 30"},
                                            fed_program_frame("hello\n") + k_fed_kill_byte + after_byte,
                                            pybox::test::k_box_like, log.path.string());
        CHECK(ran.exit_code == 137);
        CHECK(log.text() == "untouched\n");
        // A nonce that never ends waits 1 s for more.
        CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
    }
}

TEST_CASE("A kill line whose termination log cannot be opened still kills", "[fed_box]")
{
    const auto ran = run_fed_stdin_open({"sh", "-c", "cat >/dev/null; sleep 30"},
                                        fed_program_frame("hello\n") + fed_kill_line(k_nonce),
                                        pybox::test::k_box_like, "/nonexistent-folder/termination-log");
    CHECK(ran.exit_code == 137);
}

TEST_CASE("A fed box's termination log path must be quotable in Perl", "[fed_box]")
{
    CHECK_THROWS_AS(fed_box_command({"inner"}, k_file_bytes, "/tmp/it's"), std::invalid_argument);
    CHECK_THROWS_AS(fed_box_command({"inner"}, k_file_bytes, "/tmp/back\\slash"), std::invalid_argument);
}

TEST_CASE("A fed cold box's program has a pipe for stdin, fds 0-2 only, and the policy's limits", "[fed_box]")
{
    // fd 3 is listdir's own.
    const auto ran = run_fed(box_command(2.0), fed_program_frame("import os, resource\n"
                                                                 "print(sorted(os.listdir('/proc/self/fd')), "
                                                                 "os.readlink('/proc/self/fd/0').split(':')[0], "
                                                                 "resource.getrlimit(resource.RLIMIT_NOFILE), "
                                                                 "resource.getrlimit(resource.RLIMIT_CORE))\n"));
    CHECK(program_output(ran) == "['0', '1', '2', '3'] pipe (128, 128) (0, 0)\n");
    CHECK(ran.exit_code == 0);
}

TEST_CASE("A fed box's feeder does not let the program of its uid into its memory", "[fed_box]")
{
    // The feeder is the other child of the program's PID 1, alive while stdin stays open;
    // EACCES (13) for its mem and environ. (Host processes may end while /proc is listed.)
    const std::string program = "import os\n"
                                "def status(pid):\n"
                                "    try:\n"
                                "        return dict(line.split(':\\t', 1) for line in open('/proc/%s/status' % pid))\n"
                                "    except OSError:\n"
                                "        return {}\n"
                                "me = status('self')\n"
                                "feeders = [p for p in os.listdir('/proc') if p.isdigit() and p != me['Pid'].strip()\n"
                                "           and status(p).get('PPid') == me['PPid']]\n"
                                "def attempt(path):\n"
                                "    try:\n"
                                "        open(path, 'rb')\n"
                                "        return 'open'\n"
                                "    except OSError as e:\n"
                                "        return str(e.errno)\n"
                                "print(len(feeders), [attempt('/proc/%s/%s' % (feeders[0], f)) for f in ('mem', 'environ')])\n";
    const auto ran =
        run_fed_stdin_open(box_command(2.0), fed_program_frame(program), pybox::test::box_like_unprivileged_prefix());
    CHECK(program_output(ran) == "1 ['13', '13']\n");
    CHECK(ran.exit_code == 0);
}

TEST_CASE("The fed box command runs nothing unless it is PID 1, where kill(-1) would reach more than its box",
          "[fed_box]")
{
    // Run as an ordinary process of this host (the input holds no kill byte).
    auto command = fed_box_command({"sh", "-c", "echo ran"}, k_file_bytes);
    command.front() = "/bin/sh";
    const auto ran = pybox::test::run_with_input(command, fed_program_frame("x"));
    CHECK(ran.output.empty());
    CHECK(ran.exit_code == 1);
    CHECK_THAT(ran.error_output, Catch::Contains("only as PID 1"));
}
