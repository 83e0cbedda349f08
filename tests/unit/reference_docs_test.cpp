// docs/reference.md against the code: the numbers it states for the kernel watcher, the socket
// API's connections and the run queue are the ones in common/limits.hpp (and so are those of
// docs/api.md's limits table), its config.json table lists exactly the keys the daemon
// accepts, the box's environment it states is the one the daemon sets plus the engine's
// HOSTNAME, and its soak figures name the soak's defaults, which scripts/test.sh runs. The
// figures docs/kubernetes.md states (the Pod's limits, the launch's allowance, budget and polling, the end's watch,
// max_runs, how long a node without PyBox's seccomp profile is remembered) are the code's too.
#include "common/limits.hpp"
#include "daemon/config/config_keys.hpp"
#include "daemon/config/daemon_config.hpp"
#include "daemon/engine/docker_image_copy.hpp"
#include "daemon/engine/docker_settings.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/engine/kept_connections.hpp"
#include "daemon/engine/ssh_session.hpp"
#include "daemon/kube/environment_report.hpp"
#include "daemon/kube/kube_box_engine.hpp"
#include "daemon/kube/kube_limits.hpp"
#include "daemon/kube/pod_end_wait.hpp"
#include "daemon/kube/pod_spec.hpp"
#include "daemon/kube/summary_sampler.hpp"
#include "daemon/repair/repair_prompt.hpp"
#include "daemon/run/box_spec.hpp"
#include "daemon/watcher/ssh_cgroup_host.hpp"
#include "proto/answers.hpp"
#include "proto/attempts.hpp"
#include "proto/box_policy.hpp"
#include "proto/receipt_signature.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

using namespace pybox;

std::vector<std::string> doc_lines(const std::string& file = "reference.md")
{
    std::ifstream in(pybox::test::source_dir() / "docs" / file);
    REQUIRE(in.good());
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::vector<std::string> reference_lines() { return doc_lines(); }

// The row of docs/`file` whose first cell is `name`.
std::string doc_row(const std::string& name, const std::string& file = "reference.md")
{
    for (const auto& line : doc_lines(file))
        if (line.starts_with("| " + name + " |")) return line;
    FAIL("docs/" << file << " has no row " << name);
    return {};
}

std::string reference_row(const std::string& name) { return doc_row(name); }

std::set<std::string> backticked(const std::string& text)
{
    std::set<std::string> names;
    const std::regex name("`([^`]+)`");
    for (std::sregex_iterator it(text.begin(), text.end(), name), end; it != end; ++it) names.insert((*it)[1].str());
    return names;
}

// Milliseconds as the docs write seconds: 50 -> "0.05 s", 1000 -> "1 s", 2500 -> "2.5 s".
std::string seconds(std::chrono::milliseconds value)
{
    std::ostringstream text;
    text << static_cast<double>(value.count()) / 1000.0 << " s";
    return text.str();
}

// A count as the docs write it: 1048576 -> "1,048,576".
std::string grouped(std::size_t value)
{
    const std::string digits = std::to_string(value);
    std::string text;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
        text += digits[i];
    }
    return text;
}

}  // namespace

TEST_CASE("The reference's sweep and attempt journal rows state the numbers from the code")
{
    const auto expiry = reference_row("Box expiry label");
    CHECK_THAT(expiry, Catch::Contains(std::to_string(limits::k_box_expiry_s) + " s after"));
    CHECK_THAT(expiry, Catch::Contains(std::to_string(limits::k_min_box_expiry_s) + "-" +
                                       std::to_string(limits::k_max_box_expiry_s) + " s"));
    const auto settle = reference_row("Settling an unconfirmed run");
    CHECK_THAT(settle, Catch::Contains("expiry + " + std::to_string(limits::k_settle_after_expiry_s) + " s"));
    CHECK_THAT(settle, Catch::Contains("0-" + std::to_string(limits::k_max_settle_after_expiry_s) + " s"));
    // box_removal.cpp gives the retry a budget of its own, the same length as the first round's.
    const auto cleanup = reference_row("Whole cleanup");
    CHECK_THAT(cleanup, Catch::Contains("| " + seconds(limits::k_cleanup_budget) + ": one delete-and-confirm"));
    CHECK_THAT(cleanup, Catch::Contains("gets another " + seconds(limits::k_cleanup_budget)));
    const auto sweep = reference_row("Sweep of leftovers");
    CHECK_THAT(sweep, Catch::Contains("every " + std::to_string(limits::k_sweep_interval_s) + " s"));
    CHECK_THAT(sweep, Catch::Contains(std::to_string(limits::k_min_sweep_interval_s) + "-" +
                                      std::to_string(limits::k_max_sweep_interval_s) + " s"));

    const auto journal = reference_row("Attempt journal");
    CHECK(limits::k_journal_max_file_bytes == 1024 * 1024);
    CHECK_THAT(journal, Catch::Contains("past 1 MiB (" + grouped(limits::k_journal_max_file_bytes) + " bytes)"));
    CHECK_THAT(journal, Catch::Contains("at most 2 MiB"));
    CHECK_THAT(journal, Catch::Contains("lines of at most " + grouped(proto::k_max_attempt_line_bytes) + " bytes"));
    CHECK_THAT(journal, Catch::Contains("at most " + std::to_string(proto::k_max_attempt_errors) + " of " +
                                        std::to_string(proto::k_max_attempt_error_bytes) + " bytes"));
    const auto answer = reference_row("`GET /v1/attempts`");
    CHECK_THAT(answer, Catch::Contains("newest " + std::to_string(limits::k_attempts_answer_max_settled) +
                                       " settled entries and " +
                                       std::to_string(limits::k_attempts_answer_max_unsettled) + " unsettled notes"));
}

TEST_CASE("The reference's receipt store rows state the store's bounds from the code")
{
    const auto kept = reference_row("Kept receipts");
    CHECK(limits::k_max_kept_receipt_bytes == 64u * 1024 * 1024);
    CHECK_THAT(kept, Catch::Contains("at most " + grouped(limits::k_max_kept_receipts) + " receipts and 64 MiB (" +
                                     grouped(limits::k_max_kept_receipt_bytes) + " bytes)"));
    CHECK(proto::k_max_receipt_text_bytes == 16u << 20);
    CHECK_THAT(reference_row("Receipt read by `pybox verify`"), Catch::Contains("16 MiB"));
    CHECK_THAT(reference_row("Store bounds"),
               Catch::Contains(grouped(limits::k_max_kept_receipts) + " receipts, 64 MiB"));
}

TEST_CASE("The reference's kernel watcher row states the watcher's numbers from the code")
{
    const auto row = reference_row("Kernel watcher");
    CHECK_THAT(row, Catch::Contains(std::to_string(limits::k_watch_samples) + " samples in all"));
    CHECK_THAT(row, Catch::Contains(seconds(limits::k_watch_fast_gap) + " apart during the first " +
                                    seconds(limits::k_watch_fast_phase)));
    CHECK_THAT(row, Catch::Contains("never closer than " + seconds(limits::k_watch_min_gap)));
    CHECK_THAT(row, Catch::Contains("deadline + " + seconds(limits::k_watch_run_margin)));
    CHECK_THAT(row, Catch::Contains("not before " + seconds(limits::k_watch_min_run)));
    CHECK_THAT(row, Catch::Contains("up to " + seconds(limits::k_watch_final_wait) + " for the run's last task"));
    CHECK_THAT(row, Catch::Contains("polling every " + seconds(limits::k_watch_min_gap)));
    CHECK_THAT(row, Catch::Contains(seconds(limits::k_watch_finish_timeout) + " to end"));
}

TEST_CASE("The reference's ssh engine session row states the session's numbers from the code")
{
    const auto row = reference_row("ssh engine session");
    const engine::SshTimings timings;
    const auto keepalive = std::chrono::duration_cast<std::chrono::milliseconds>(timings.keepalive_interval);
    CHECK_THAT(row, Catch::Contains("authentication) " + seconds(timings.connect_timeout)));
    CHECK_THAT(row, Catch::Contains("keep-alives every " + seconds(keepalive)));
    CHECK_THAT(row, Catch::Contains("dropped after " + seconds(keepalive * timings.keepalive_missed) + " without"));
    CHECK_THAT(row, Catch::Contains("fail fast for " + seconds(timings.reconnect_first) + ", doubling to " +
                                    seconds(timings.reconnect_most)));
    CHECK_THAT(row, Catch::Contains("`rmdir` over ssh " + seconds(watcher::k_cgroup_command_timeout)));
    CHECK(engine::k_kept_connections == 1);  // the row says "one for plain calls"
    CHECK_THAT(row, Catch::Contains("one for plain calls, kept between them for at most " +
                                    seconds(std::chrono::milliseconds(engine::k_kept_idle))));
}

TEST_CASE("The reference's config.json table lists exactly the top-level keys of the table of config.json's keys")
{
    std::set<std::string> documented;
    std::string engines_row;
    bool in_section = false;
    for (const auto& line : reference_lines()) {
        if (line.starts_with("## ")) in_section = line == "## config.json";
        if (in_section && line.starts_with("| `")) documented.merge(backticked(line.substr(0, line.find('|', 1))));
        if (in_section && line.starts_with("| `engines` |")) engines_row = line;
    }
    std::set<std::string> known;
    for (const auto& key : config::config_keys())
        if (key.section == config::k_top_section) known.insert(std::string(key.name));
    CHECK(documented == known);
    // The engines row names every key of an entry (as `key`, or as "key" in its example).
    const auto named = backticked(engines_row);
    for (const auto& key : config::config_keys()) {
        if (key.section != config::k_engines_section) continue;
        INFO(key.name);
        CHECK((named.contains(std::string(key.name)) ||
               engines_row.find('"' + std::string(key.name) + '"') != std::string::npos));
    }
}

TEST_CASE("The reference states exactly the box's environment: the daemon's Env and the engine's HOSTNAME")
{
    std::set<std::string> documented;
    for (const auto& text : backticked(reference_row("Other")))
        if (text.find('=') != std::string::npos) documented.insert(text);
    const auto environment = daemon::box_environment();
    std::set<std::string> expected(environment.begin(), environment.end());
    expected.insert(std::string("HOSTNAME=") + daemon::k_box_hostname);
    CHECK(documented == expected);
}

TEST_CASE("The reference's socket API and run queue rows state the numbers from the code")
{
    const auto socket_api = reference_row("Socket API");
    CHECK_THAT(socket_api, Catch::Contains("closed after " + seconds(limits::k_idle_connection_timeout) + " idle"));
    CHECK_THAT(socket_api, Catch::Contains("within " + seconds(limits::k_request_read_timeout) + " of its first byte"));
    const auto queue = reference_row("Run queue");
    CHECK_THAT(queue, Catch::Contains("at most " + std::to_string(limits::k_max_waiting_runs) + " wait"));
    CHECK_THAT(queue, Catch::Contains("none longer than " + seconds(limits::k_max_queue_wait)));
    CHECK_THAT(queue, Catch::Contains("`Retry-After: " + std::to_string(limits::k_busy_retry_after.count()) + "`"));
    CHECK_THAT(reference_row("`pybox` waiting for the daemon"),
               Catch::Contains("`exec`: " + seconds(limits::k_max_queue_wait) + " (the longest wait in the run queue)"));
    CHECK_THAT(reference_row("Open connections to the daemon"),
               Catch::StartsWith("| Open connections to the daemon | " + std::to_string(limits::k_max_connections) + ";"));
    CHECK(reference_row("Runs waiting for their turn") ==
          "| Runs waiting for their turn | " + std::to_string(limits::k_max_waiting_runs) + ", behind the one running |");
    CHECK(reference_row("Runs of one user waiting (system mode)") ==
          "| Runs of one user waiting (system mode) | " + std::to_string(limits::k_max_waiting_runs_per_user) +
              " of those places; users take turns |");
}

TEST_CASE("docs/api.md names every setup status a strict reader accepts")
{
    const auto row = doc_row("`images[].status`", "api.md");
    for (const auto status : {proto::k_setup_built, proto::k_setup_up_to_date, proto::k_setup_from_cache,
                              proto::k_setup_pulled})
        CHECK_THAT(row, Catch::Contains("`\"" + std::string(status) + "\"`"));
}

TEST_CASE("docs/api.md's limits table states the connection and run queue numbers from the code")
{
    const auto row = [](const std::string& name) { return doc_row(name, "api.md"); };
    CHECK_THAT(row("idle connection (no request begun since connecting or since the last answer)"),
               Catch::Contains("| " + seconds(limits::k_idle_connection_timeout) + " |"));
    CHECK_THAT(row("whole request (header and body)"),
               Catch::Contains("within " + seconds(limits::k_request_read_timeout) + " of its first byte"));
    CHECK_THAT(row("open connections"), Catch::Contains("| " + std::to_string(limits::k_max_connections) + " |"));
    CHECK_THAT(row("runs waiting for their turn"),
               Catch::Contains("| " + std::to_string(limits::k_max_waiting_runs) + ", behind the one running |"));
    CHECK_THAT(row("waiting for a run's turn"), Catch::Contains("| " + seconds(limits::k_max_queue_wait) + " |"));
    CHECK_THAT(row("`Retry-After` of `busy` and `too_many_connections`"),
               Catch::Contains("| " + std::to_string(limits::k_busy_retry_after.count()) + " s |"));
}

TEST_CASE("The reference's soak figures name the soak's own defaults, which the test command runs")
{
    const std::string script = test::read_text(pybox::test::source_dir() / "tests" / "soak" / "soak.sh");
    const auto default_of = [&](const std::string& assignment) {
        std::smatch match;
        REQUIRE(std::regex_search(script, match, std::regex(assignment + R"(=\$\{[A-Z_0-9]+:-([0-9]+)\})")));
        return match[1].str();
    };
    const std::string command = "tests/soak/soak.sh " + default_of("sequential") + " " + default_of("parallel") + " " +
                                default_of("clients");
    const std::string reference = test::read_text(pybox::test::source_dir() / "docs" / "reference.md");
    CHECK_THAT(reference, Catch::Contains("Soak (`" + command + "`"));
    const auto slack = std::stoi(default_of("rss_slack_kb"));
    CHECK_THAT(reference, Catch::Contains("fails past +" + std::to_string(slack / 1000) + "," +
                                          std::to_string(slack % 1000 + 1000).substr(1) + " KiB"));
    // scripts/test.sh gives the soak no counts, so it runs these defaults.
    const std::string test_command = test::read_text(pybox::test::source_dir() / "scripts" / "test.sh");
    CHECK_THAT(test_command, Catch::Contains("\n./tests/soak/with_fixture.sh \"$release_dir\"\n"));
}

TEST_CASE("The reference's test command figures name the ccache size, fuzz targets and seconds the script uses")
{
    const std::string script = test::read_text(pybox::test::source_dir() / "scripts" / "test.sh");
    std::smatch match;
    REQUIRE(std::regex_search(script, match, std::regex(R"(CCACHE_MAXSIZE:-([0-9]+)G\})")));
    const std::string reference = test::read_text(pybox::test::source_dir() / "docs" / "reference.md");
    CHECK_THAT(reference, Catch::Contains("(`CCACHE_MAXSIZE` " + match[1].str() + " GB)"));
    REQUIRE(std::regex_search(script, match, std::regex(R"(FUZZ_SECONDS:-([0-9]+)\})")));
    std::size_t targets = 0;
    for (const auto& entry : std::filesystem::directory_iterator(pybox::test::source_dir() / "tests" / "fuzz"))
        if (entry.path().filename().string().ends_with("_fuzz.cpp")) ++targets;
    CHECK_THAT(reference, Catch::Contains(std::to_string(targets) + " targets x " + match[1].str() + " s"));
}

TEST_CASE("The MCP limits in reference.md and mcp.md are the ones the server enforces")
{
    // The section "## MCP" of reference.md, and the Limits table of mcp.md.
    const auto mcp_row = [](const std::string& name) { return doc_row(name); };
    const auto mcp_doc_row = [](const std::string& name) { return doc_row(name, "mcp.md"); };
    for (const auto& row : {mcp_row("Program source"), mcp_doc_row("Program source")})
        CHECK_THAT(row, Catch::Contains(grouped(limits::k_max_source_bytes) + " bytes"));
    CHECK_THAT(mcp_doc_row("Output kept per stream"),
               Catch::Contains("1-" + grouped(limits::k_mcp_max_output_limit_bytes) + " bytes (default " +
                               grouped(limits::k_mcp_default_output_limit_bytes) + ")"));
    for (const auto& row : {mcp_row("Files in"), mcp_doc_row("Files in")})
        CHECK_THAT(row, Catch::Contains(std::to_string(limits::k_mcp_max_input_files) + " files, " +
                                        grouped(limits::k_mcp_max_input_bytes) + " bytes"));
    for (const auto& row : {mcp_row("Files back"), mcp_doc_row("Files back")})
        CHECK_THAT(row, Catch::Contains(grouped(limits::k_mcp_max_output_content_bytes) + " bytes"));
    for (const auto& row : {mcp_row("Receipt delivered"), mcp_doc_row("Receipt delivered")})
        CHECK_THAT(row, Catch::Contains(grouped(limits::k_mcp_max_receipt_bytes) + " bytes"));
    for (const auto& row : {mcp_row("Incoming message"), mcp_doc_row("Incoming message")})
        CHECK_THAT(row, Catch::Contains(grouped(limits::k_mcp_max_message_bytes) + " bytes"));
    for (const auto& row : {mcp_row("Response"), mcp_doc_row("Response")})
        CHECK_THAT(row, Catch::Contains(grouped(limits::k_mcp_max_response_bytes) + " bytes"));
    CHECK(mcp_row("Calls per session") == "| Calls per session | " + std::to_string(limits::k_mcp_max_calls) + " |");
    CHECK(mcp_row("Messages per session") ==
          "| Messages per session | " + std::to_string(limits::k_mcp_max_messages) + " |");
    const std::string progress = grouped(limits::k_mcp_max_progress_message_bytes) +
                                 " bytes of output per `notifications/progress` message, " +
                                 std::to_string(limits::k_mcp_max_progress_notifications) + " messages per call";
    CHECK_THAT(mcp_row("Live output (progress)"), Catch::Contains(progress));
    CHECK_THAT(mcp_doc_row("Live output"), Catch::Contains(progress));
    CHECK_THAT(mcp_doc_row("Per session"), Catch::Contains(std::to_string(limits::k_mcp_max_calls) + " `tools/call`") &&
                                               Catch::Contains(std::to_string(limits::k_mcp_max_messages) + " messages"));
    const std::string budget = "waits " + seconds(limits::k_mcp_short_run_budget) + " per call when the deadline is at most " +
                               seconds(std::chrono::milliseconds(static_cast<long>(limits::k_mcp_budget_ceiling_s * 1000))) +
                               "; above, twice the deadline + " + seconds(limits::k_daemon_run_worst_case_margin) +
                               " (the daemon's worst case once the run's turn came) + " +
                               seconds(limits::k_mcp_budget_extra);
    CHECK_THAT(mcp_row("MCP supervisor"), Catch::Contains(budget));
    CHECK_THAT(mcp_doc_row("Supervisor budget per call"),
               Catch::Contains(seconds(limits::k_mcp_short_run_budget) + " when the deadline is at most") &&
                   Catch::Contains(seconds(limits::k_daemon_run_worst_case_margin)));
}

TEST_CASE("The reference's pool row states the image copy's budgets and the pool's queue bound from the code")
{
    const auto row = reference_row("Pool of engines");
    const auto copy_minutes = std::to_string(engine::k_image_copy_timeout.count()) + " min";
    CHECK_THAT(row, Catch::Contains("export " + copy_minutes + " and load " + copy_minutes));
    CHECK_THAT(row, Catch::Contains("at most " + std::to_string(engine::k_max_image_copy_bytes >> 30) + " GiB"));
    CHECK_THAT(row, Catch::Contains("holds " + std::to_string(limits::k_max_waiting_runs + 1) + " × N runs"));
    CHECK_THAT(doc_row("`engines`", "reference.md"), Catch::Contains("at most " + std::to_string(engine::k_max_extra_engines)));
}

TEST_CASE("The reference's warm box rows state the numbers from the code")
{
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    const auto how_many = reference_row("How many");
    CHECK_THAT(how_many, Catch::Contains(std::to_string(limits::k_default_warm_boxes) + " by default, 0-" +
                                         std::to_string(limits::k_max_warm_boxes)));
    CHECK_THAT(reference_row("`warm_boxes`"), Catch::Contains("0-" + std::to_string(limits::k_max_warm_boxes)));
    CHECK_THAT(reference_row("None ready"), Catch::Contains("at most " + seconds(limits::k_warm_box_longest_wait)));
    CHECK_THAT(reference_row("When they are made"),
               Catch::Contains("waited less than " + seconds(limits::k_warm_series_gap)));
    CHECK_THAT(reference_row("When they are made"),
               Catch::Contains("retried after " + seconds(duration_cast<milliseconds>(limits::k_warm_retry_first)) +
                               ", doubling to " +
                               seconds(duration_cast<milliseconds>(limits::k_warm_retry_longest))));
    const auto renewal = reference_row("Renewal");
    const auto before = limits::k_warm_box_renewed_before_expiry_s;
    const auto least = before + limits::k_min_warm_box_wait_s;
    CHECK_THAT(renewal, Catch::Contains("replaced " + std::to_string(before) + " s"));
    CHECK_THAT(renewal, Catch::Contains("after " + std::to_string(limits::k_box_expiry_s - before) + " s of waiting"));
    CHECK_THAT(renewal, Catch::Contains("under " + std::to_string(least) + " s (" + std::to_string(before) + " + " +
                                        std::to_string(limits::k_min_warm_box_wait_s) + " s"));
    CHECK_THAT(reference_row("`warm_boxes`"), Catch::Contains("under " + std::to_string(least)));
}

TEST_CASE("The reference's stopping row and warm start budget state what the code sets")
{
    const auto policy = *proto::policy_for_image("stdlib");
    const auto spec =
        engine::docker_create_body(daemon::make_box_spec(policy, "sha256:abc", proto::box_command(2.0), {}), "runc");
    CHECK_THAT(reference_row("Stopping"),
               Catch::Contains("`StopSignal: " + std::string(spec.at("StopSignal").as_string()) + "`"));
    CHECK_THAT(reference_row("Start"),
               Catch::Contains("the longest deadline, " +
                               std::to_string(static_cast<int>(limits::k_max_timeout_s)) + " s"));
}

TEST_CASE("How it works shows a cold and a warm box's first process exactly as the code sets them, and the receipt "
          "guide names them")
{
    const auto command = proto::warm_box_command();
    REQUIRE(command.size() == 3);
    CHECK(command[0] == "perl");
    CHECK(command[1] == "-e");
    const std::string guide = test::read_text(pybox::test::source_dir() / "docs" / "how-it-works.md");
    CHECK_THAT(guide, Catch::Contains("```perl\n" + command[2] + "```\n"));
    const auto cold = proto::box_command(2.0);
    REQUIRE(cold[0] == "perl");
    CHECK_THAT(guide, Catch::Contains("```perl\n" + cold[2] + "```\n"));
    CHECK_THAT(guide, Catch::Contains("`perl -e`"));
    CHECK_THAT(doc_row("`command`", "receipt.md"), Catch::Contains("`[\"perl\",\"-e\",\"<program>\"]`"));
}

TEST_CASE("How it works shows a Kubernetes box's fed first process exactly as the code sets it")
{
    const auto command = proto::fed_box_command({"inner"}, proto::BoxPolicy{}.tmpfs_bytes);
    REQUIRE(command.size() == 5);
    const std::string guide = test::read_text(pybox::test::source_dir() / "docs" / "how-it-works.md");
    CHECK_THAT(guide, Catch::Contains("`sh -c '" + command[2] + "'"));
    CHECK_THAT(guide, Catch::Contains("```perl\n" + command[3] + "```\n"));
    CHECK_THAT(guide, Catch::Contains("A `" + std::string(1, proto::k_fed_kill_byte) + "` there is the daemon's kill"));
}

// Every figure in `text` that `pattern`'s first group captures; fails the test when there is none.
std::vector<std::string> figures(const std::string& text, const std::string& pattern)
{
    std::vector<std::string> found;
    const std::regex figure(pattern);
    for (std::sregex_iterator it(text.begin(), text.end(), figure), end; it != end; ++it) found.push_back((*it)[1].str());
    CHECK_FALSE(found.empty());
    return found;
}

TEST_CASE("docs/kubernetes.md states the Pod's limits, the launch's timing, the end's watch and max_runs from the code")
{
    const std::string doc = test::read_text(pybox::test::source_dir() / "docs" / "kubernetes.md");
    const std::string allowance = std::to_string(kube::k_pod_start_allowance.count());
    for (const auto& stated : figures(doc, R"(timer plus (\d+) s)")) CHECK(stated == allowance);
    for (const auto& stated : figures(doc, R"(at least (\d+) s allowed)")) CHECK(stated == allowance);
    for (const auto& stated : figures(doc, R"(every (\d+) ms until the kubelet)"))
        CHECK(stated == std::to_string(kube::k_attach_retry_interval.count()));
    for (const auto& stated : figures(doc, R"(after every (\d+) refused)"))
        CHECK(stated == std::to_string(kube::k_attaches_per_pod_read));
    for (const auto& stated : figures(doc, R"(the Pod \(?every (\d+) ms)"))
        CHECK(stated == std::to_string(kube::k_pod_poll_interval.count()));
    for (const auto& stated : figures(doc, R"(&timeoutSeconds=(\d+)`)"))
        CHECK(stated == std::to_string(kube::k_pod_watch_seconds.count()));
    for (const auto& stated : figures(doc, R"(each event one line of at most (\d+) bytes)"))
        CHECK(stated == std::to_string(kube::k_max_pod_watch_line_bytes));
    for (const auto& stated : figures(doc, R"(strict, at most (\d+) bytes)"))
        CHECK(stated == std::to_string(kube::k_max_environment_report_bytes));
    const auto remembered = figures(doc, R"(remembers the node for (\d+) minutes)");
    CHECK(remembered.size() == 1);
    for (const auto& stated : remembered) CHECK(stated == std::to_string(kube::k_missing_profile_memory.count()));
    CHECK_THAT(doc_row("`max_runs`", "kubernetes.md"),
               Catch::Contains("(1-" + std::to_string(engine::k_max_cluster_runs) + ", default " +
                               std::to_string(engine::k_default_cluster_runs) + ")"));

    const auto policy = *proto::policy_for_image("stdlib");
    const auto memory = kube::memory_quantity(policy.memory_bytes);
    const auto cpu = kube::cpu_quantity(policy.cpu_millis);
    CHECK_THAT(doc, Catch::Contains("requests = limits: memory " + memory + ", cpu " + cpu + " (the policy's figures)"));
    CHECK_THAT(doc, Catch::Contains("requests = limits, " + memory + " and " + cpu + " |"));
    const auto uid = policy.user.substr(0, policy.user.find(':'));
    CHECK(policy.user == uid + ":" + uid);  // the doc states one number for both
    CHECK_THAT(doc, Catch::Contains("`runAsUser`/`runAsGroup` " + uid + ","));
    CHECK_THAT(doc, Catch::Contains("open-files limit (" + std::to_string(policy.open_files) + ")"));
    for (const auto& stated : figures(doc, R"(at once and then every (\d+(?:\.\d+)? s), one read)"))
        CHECK(stated == seconds(kube::k_summary_interval));
}

TEST_CASE("docs/receipt.md states how often and how much of a cluster box's kubelet summary is read, from the code")
{
    const std::string doc = test::read_text(pybox::test::source_dir() / "docs" / "receipt.md");
    for (const auto& stated : figures(doc, R"(at once and then every (\d+(?:\.\d+)? s), one read)"))
        CHECK(stated == seconds(kube::k_summary_interval));
    for (const auto& stated : figures(doc, R"(at most (\d+) bytes,)"))
        CHECK(stated == std::to_string(kube::k_max_kubelet_summary_bytes));
}

TEST_CASE("The repair loop's limits in repair.md and reference.md are the ones the loop keeps")
{
    const std::string rounds = "1-" + std::to_string(limits::k_max_repair_rounds) + ", default " +
                               std::to_string(limits::k_default_repair_rounds);
    const std::string budget = std::to_string(limits::k_repair_budget.count()) + " s";
    CHECK_THAT(doc_row("Rounds", "repair.md"), Catch::Contains(rounds));
    CHECK_THAT(doc_row("A repair in all", "repair.md"), Catch::Contains(budget));
    CHECK_THAT(doc_row("Program (yours, and each of the model's)", "repair.md"),
               Catch::Contains(grouped(limits::k_max_source_bytes) + " bytes"));
    CHECK_THAT(doc_row("stderr sent to the model", "repair.md"),
               Catch::Contains("the last " + grouped(limits::k_repair_stderr_excerpt_bytes) + " bytes"));
    CHECK_THAT(doc_row("stdout sent to the model", "repair.md"),
               Catch::Contains("the last " + grouped(limits::k_repair_stdout_excerpt_bytes) + " bytes"));
    CHECK_THAT(doc_row("Conversation kept", "repair.md"), Catch::Contains(grouped(pybox::repair::k_conversation_bytes) + " bytes"));
    const auto row = reference_row("A repair (`pybox repair`)");
    CHECK_THAT(row, Catch::Contains("1-" + std::to_string(limits::k_max_repair_rounds) + " rounds (default " +
                                    std::to_string(limits::k_default_repair_rounds) + "), " + budget + " in all"));
    CHECK_THAT(row, Catch::Contains("the last " + grouped(limits::k_repair_stderr_excerpt_bytes) + " bytes of stderr and " +
                                    grouped(limits::k_repair_stdout_excerpt_bytes) + " of stdout"));
}

TEST_CASE("Every file and folder the reference's source map names exists")
{
    const std::string reference = test::read_text(pybox::test::source_dir() / "docs" / "reference.md");
    const auto start = reference.find("## Source map");
    REQUIRE(start != std::string::npos);
    const auto end = reference.find("\n## ", start + 1);
    std::istringstream rows(reference.substr(start, end == std::string::npos ? std::string::npos : end - start));
    std::size_t named = 0;
    for (std::string row; std::getline(rows, row);) {
        if (!row.starts_with("| `")) continue;
        // The first column: `a/b/c.cpp`, `d.cpp` (a bare name is in the folder of the path before it).
        const std::string first = row.substr(2, row.find(" |", 2) - 2);
        const std::regex path_pattern("`([^`]+)`");
        std::filesystem::path folder;
        for (auto it = std::sregex_iterator(first.begin(), first.end(), path_pattern); it != std::sregex_iterator(); ++it) {
            const std::string name = (*it)[1].str();
            const std::filesystem::path path = name.find('/') == std::string::npos ? folder / name : std::filesystem::path(name);
            if (name.find('/') != std::string::npos) folder = path.parent_path();
            INFO(row);
            CHECK(std::filesystem::exists(pybox::test::source_dir() / path));
            ++named;
        }
    }
    CHECK(named > 20);
}
