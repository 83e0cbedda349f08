#include "client/unsealed/unsealed_run.hpp"

#include "client/unsealed/unsealed_plan.hpp"
#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "common/files.hpp"
#include "common/ids.hpp"
#include "common/limited_process.hpp"
#include "common/paths.hpp"
#include "common/sha256.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace pybox::client::unsealed {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t k_max_config_bytes = 64 * 1024;  // as the daemon reads config.json

Expected<fs::path> configured_python()
{
    auto paths = RuntimePaths::from_environment();
    if (!paths) return paths.error();
    const auto file = paths->config_file();
    auto text = read_file_capped(file, k_max_config_bytes);
    if (!text && text.error().code != api_error::k_file_missing) return make_error(api_error::k_config_invalid, text.error().message);
    auto python = python_from_config(text ? std::optional<std::string>(std::move(*text)) : std::nullopt, file);
    if (!python) return python;
    std::error_code ec;
    const auto status = fs::status(*python, ec);
    if (ec || !fs::is_regular_file(status) || (status.permissions() & (fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec)) == fs::perms::none)
        return make_error("unsealed_python_unusable",
                          python->string() + " is not an executable file (config.json's \"" + std::string(k_python_key) +
                              "\" names the interpreter of unsealed runs; default " + std::string(k_default_python) + ").");
    return python;
}

fs::path temporary_parent()
{
    const char* tmpdir = std::getenv("TMPDIR");
    if (tmpdir != nullptr && tmpdir[0] == '/') return tmpdir;
    return "/tmp";
}

}  // namespace

Expected<proto::Receipt> run_unsealed(const UnsealedRequest& request)
{
    if (running_as_root())
        return make_error("unsealed_refused",
                          "Unsealed runs are refused as root: the process limit does not bind root, and the program "
                          "would have all of root's power. Run pybox exec --unsealed as an ordinary user.");
    auto python = configured_python();
    if (!python) return python.error();

    const auto start = MonoClock::now();
    UnsealedEvidence evidence;
    evidence.run_id = random_id_128();
    evidence.created_at = rfc3339_utc(WallClock::now());
    evidence.source_sha256 = sha256_hex(request.source);
    evidence.source_bytes = request.source.size();
    evidence.timeout_s = request.timeout_s;
    evidence.output_limit_bytes = request.output_limit_bytes;
    evidence.user = current_user_and_group();
    evidence.command = python_command(*python);

    auto folder = make_temporary_folder(temporary_parent(), std::string(k_folder_prefix));
    if (!folder) return folder.error();
    auto& facts = evidence.facts;
    facts.python = python->string();
    facts.working_folder = folder->string();
    facts.environment = scrubbed_environment(*folder);
    facts.limits = plan_limits(request.timeout_s, count_user_tasks(current_real_uid()));
    evidence.prepare_s = seconds_between(start, MonoClock::now());

    LimitedRun run;
    run.argv = evidence.command;
    run.environment = facts.environment;
    run.working_dir = *folder;
    run.input = request.source;
    run.limits = resource_limits(facts.limits);
    run.deadline = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(request.timeout_s));
    run.output_cap = request.output_limit_bytes;
    auto result = run_limited(run);

    const auto cleanup_start = MonoClock::now();
    std::error_code ec;
    fs::remove_all(*folder, ec);
    facts.working_folder_removed = !fs::exists(fs::symlink_status(*folder, ec));
    if (!result) return result.error();
    facts.group_killed_after_exit = result->group_killed_after_exit;
    evidence.result = std::move(*result);
    evidence.cleanup_s = seconds_between(cleanup_start, MonoClock::now());
    if (evidence.result.deadline_kill_sent) evidence.deadline_kill_sent_at = rfc3339_utc(evidence.result.deadline_kill_sent_at);
    return unsealed_receipt(evidence);
}

}  // namespace pybox::client::unsealed
