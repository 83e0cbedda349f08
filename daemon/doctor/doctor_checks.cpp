#include "daemon/doctor/doctor_checks.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/engine/docker_facts.hpp"
#include "daemon/run/run_cgroup.hpp"
#include "daemon/run/run_watch.hpp"
#include "daemon/vm/engine_checks.hpp"
#include "proto/seccomp_profile.hpp"


#include <cstdio>

namespace pybox::daemon {

namespace {

using proto::DoctorCheck;
using proto::k_doctor_attempts, proto::k_doctor_cgroups, proto::k_doctor_clock, proto::k_doctor_engine,
    proto::k_doctor_free_space, proto::k_doctor_images, proto::k_doctor_leftover_boxes, proto::k_doctor_runtime_folder,
    proto::k_doctor_seccomp;

DoctorCheck ok(std::string_view name, std::string detail)
{
    return {std::string(name), std::string(proto::k_verdict_ok), std::move(detail), ""};
}

DoctorCheck problem(std::string_view name, std::string detail, std::string fix)
{
    return {std::string(name), std::string(proto::k_verdict_problem), std::move(detail), std::move(fix)};
}

DoctorCheck unknown(std::string_view name, std::string why)
{
    return {std::string(name), std::string(proto::k_verdict_unknown), std::move(why), ""};
}

std::string octal(unsigned mode)
{
    char text[8];
    std::snprintf(text, sizeof text, "%04o", mode & 07777u);
    return text;
}

std::string gibibytes(std::uint64_t bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(std::uint64_t{1} << 30));
    return text;
}

std::string milliseconds(std::int64_t ns)
{
    char text[32];
    std::snprintf(text, sizeof text, "%+.1f ms", static_cast<double>(ns) / 1e6);
    return text;
}

std::string joined_problems(const std::vector<proto::EngineProblem>& problems)
{
    std::string text;
    for (const auto& item : problems) text += (text.empty() ? "" : "; ") + item.message;
    return text.empty() ? "no reason given" : text;
}

// The engine checks of vm::check_info whose names start with `prefix` ("info.seccomp", ...).
std::vector<vm::CheckProblem> info_problems(const engine::EngineInfo& info, std::string_view prefix)
{
    std::vector<vm::CheckProblem> found;
    for (auto& item : vm::check_info(info, vm::EngineExpectations{false, {}, {}}))
        if (item.check.starts_with(prefix)) found.push_back(std::move(item));
    return found;
}

// verify_image_for_run's messages end with ". Run: <command>": the detail, then the fix.
DoctorCheck image_problem(const Error& error)
{
    static constexpr std::string_view k_run = " Run: ";
    const auto at = error.message.rfind(k_run);
    if (at == std::string::npos) return problem(k_doctor_images, error.message, "pybox setup");
    return problem(k_doctor_images, error.message.substr(0, at), error.message.substr(at + k_run.size()));
}

bool image_check_failed(std::string_view code)
{
    return code == api_error::k_image_not_built || code == api_error::k_image_mismatch || code == api_error::k_image_missing ||
           code == api_error::k_images_file_invalid;
}

}  // namespace

DoctorCheck check_engine(const proto::EngineStatus& status)
{
    if (!status.running)
        return problem(k_doctor_engine, "the engine at " + status.engine_socket + " is not running: " +
                                            joined_problems(status.problems),
                       "pybox vm start");
    if (!status.verified)
        return problem(k_doctor_engine, "the engine at " + status.engine_socket + " runs but is not verified: " +
                                            joined_problems(status.problems),
                       "pybox vm start (it checks the engine again and says what is off)");
    std::size_t verified = 0;
    for (const auto& engine : status.engines) {
        if (!engine.takes_runs) continue;
        if (!engine.verified)
            return problem(k_doctor_engine, "engine " + engine.id + " of the pool (" + engine.address +
                                                ") is not verified: " + joined_problems(engine.problems),
                           "fix engine " + engine.id + " as said, then run pybox vm start");
        ++verified;
    }
    std::string detail = "running and verified (" + status.engine_socket + ", API " +
                         status.api_version.value_or("not negotiated") + ")";
    if (!status.engines.empty()) detail += "; " + std::to_string(verified) + " engines of the pool verified";
    return ok(k_doctor_engine, detail);
}

DoctorCheck check_runtime_folder(const std::filesystem::path& root, const std::optional<FileFacts>& facts,
                                 unsigned uid)
{
    const std::string shown = root.string();
    if (!facts) return problem(k_doctor_runtime_folder, shown + " does not exist", "start pyboxd, which makes it");
    if (facts->kind != FileFacts::Kind::folder)
        return problem(k_doctor_runtime_folder, shown + " is not a folder",
                       "move it away and start pyboxd again, which makes the folder");
    if (facts->uid != uid)
        return problem(k_doctor_runtime_folder,
                       shown + " belongs to uid " + std::to_string(facts->uid) + ", not to " + std::to_string(uid),
                       "chown " + std::to_string(uid) + " " + shown + " (or set PYBOX_HOME to a folder of your own)");
    if ((facts->mode & 07777u) != 0700u)
        return problem(k_doctor_runtime_folder, shown + " has mode " + octal(facts->mode) + ", not 0700",
                       "chmod 700 " + shown);
    return ok(k_doctor_runtime_folder, shown + " is 0700 and yours");
}

DoctorCheck check_free_space(const std::filesystem::path& root, const Expected<std::uint64_t>& available)
{
    if (!available) return unknown(k_doctor_free_space, available.error().message);
    const std::string seen = gibibytes(*available) + " free for " + root.string();
    if (*available < k_doctor_min_free_bytes)
        return problem(k_doctor_free_space, seen + ", less than " + gibibytes(k_doctor_min_free_bytes),
                       "free space on that file system (or set PYBOX_HOME to one with room)");
    return ok(k_doctor_free_space, seen);
}

DoctorCheck check_images(const Expected<std::vector<ImageVerdict>>& images)
{
    if (!images) return image_problem(images.error());
    if (images->empty()) return problem(k_doctor_images, "no image is built", "pybox setup");
    std::string names;
    for (const auto& image : *images) {
        if (!image.verified && image_check_failed(image.verified.error().code))
            return image_problem(image.verified.error());
        if (!image.verified)
            return unknown(k_doctor_images, "the " + image.name + " image could not be checked: " +
                                                image.verified.error().message);
        names += (names.empty() ? "" : ", ") + image.name;
    }
    return ok(k_doctor_images, names + ": image ID and recipe SHA-256 match images.json");
}

DoctorCheck check_seccomp(const Expected<engine::EngineInfo>& info)
{
    const std::string profile =
        std::string(proto::k_seccomp_profile_name) + " (sha256 " + proto::seccomp_profile_sha256().substr(0, 12) + ")";
    if (!info) return unknown(k_doctor_seccomp, "the engine's /info was not read: " + info.error().message);
    if (const auto found = info_problems(*info, "info.seccomp"); !found.empty())
        return problem(k_doctor_seccomp, found.front().message + " Boxes need it for " + profile,
                       "use a kernel and dockerd built with seccomp (Debian's are)");
    return ok(k_doctor_seccomp, "the engine offers seccomp; boxes get " + profile);
}

DoctorCheck check_cgroups(const Expected<engine::EngineInfo>& info, const WatcherView& watcher)
{
    if (!info) return unknown(k_doctor_cgroups, "the engine's /info was not read: " + info.error().message);
    if (const auto found = info_problems(*info, "info.cgroup"); !found.empty())
        return problem(k_doctor_cgroups, found.front().message, "run the engine with cgroup v1 or v2 and cgroupfs");
    const auto facts = engine::cgroup_facts_from_info(*info);
    if (!facts) return problem(k_doctor_cgroups, facts.error().message, "run the engine with cgroupfs");
    const std::string seen = "cgroup v" + std::to_string(facts->version) + ", driver " + facts->driver;
    if (facts->driver != "cgroupfs")
        return problem(k_doctor_cgroups, seen + ": runs get no run parent and are not watched",
                       "start the engine with --exec-opt native.cgroupdriver=cgroupfs");
    if (watcher.off_reason && *watcher.off_reason == k_watcher_off_in_config)
        return problem(k_doctor_cgroups, seen + "; " + *watcher.off_reason,
                       "remove \"watcher\": false from config.json, then restart pyboxd");
    // On macOS the boxes' cgroup files are the colima VM's, not this machine's.
    if (watcher.elsewhere)
        return unknown(k_doctor_cgroups, seen + "; the watcher reads " + *watcher.elsewhere + ", not this machine's cgroup files");
    const bool seen_by_watcher = facts->version == 1 ? watcher.v1_controllers_seen : watcher.v2_unified_seen;
    if (!seen_by_watcher)
        return problem(k_doctor_cgroups,
                       seen + ", but the watcher does not see that hierarchy under " + watcher.mount_root,
                       "mount the cgroup file systems at " + watcher.mount_root + " as the engine uses them");
    return ok(k_doctor_cgroups, seen + "; the watcher reads " + watcher.mount_root);
}

DoctorCheck check_leftover_boxes(const Expected<std::vector<LabelledBox>>& boxes, std::string_view engine_address)
{
    if (!boxes) return unknown(k_doctor_leftover_boxes, "the engine's boxes were not listed: " + boxes.error().message);
    std::string ids, runs;
    std::size_t left = 0, owned = 0;
    for (const auto& box : *boxes) {
        if (box.owned) {
            ++owned;
            continue;
        }
        ++left;
        ids += " " + box.id.substr(0, 12);
        runs += (runs.empty() ? "" : ", ") + (box.run_id.empty() ? "?" : box.run_id.substr(0, 8));
    }
    if (left > 0)
        return problem(k_doctor_leftover_boxes,
                       std::to_string(left) + " box(es) with this installation's label that no run holds (runs " +
                           runs + ")",
                       "pyboxd's sweep removes each once its expiry passes; now: docker -H " +
                           std::string(engine_address) + " rm -f" + ids);
    return ok(k_doctor_leftover_boxes,
              "none (" + std::to_string(owned) + " box(es) held by runs or kept warm)");
}

DoctorCheck check_attempts(const Expected<proto::AttemptsAnswer>& attempts, const std::filesystem::path& attempts_dir)
{
    if (!attempts) return unknown(k_doctor_attempts, "the attempt notes were not read: " + attempts.error().message);
    std::string waiting, damaged;
    for (const auto& note : attempts->unsettled) {
        if (note.in_progress) continue;
        auto& list = note.readable ? waiting : damaged;
        list += (list.empty() ? "" : ", ") + note.run_id.substr(0, 8);
    }
    if (!damaged.empty())
        return problem(k_doctor_attempts, "damaged attempt notes the sweep leaves: " + damaged,
                       "read, then delete, those notes in " + attempts_dir.string());
    if (!waiting.empty())
        return problem(k_doctor_attempts, "runs whose end pyboxd did not confirm, not settled yet: " + waiting,
                       "keep pyboxd and the engine running: the sweep settles each from its expiry + 60 s "
                       "(pybox attempts shows them)");
    return ok(k_doctor_attempts, "no unsettled attempt (" + std::to_string(attempts->settled.size()) +
                                     " settled in the journal)");
}

DoctorCheck check_clock(const Expected<proto::ClockOffset>& offset)
{
    if (!offset) return unknown(k_doctor_clock, offset.error().message);
    const std::int64_t limit_ns = k_doctor_max_clock_offset_ms * 1'000'000;
    const std::string seen =
        "the engine's clock is " + milliseconds(offset->min_ns) + " to " + milliseconds(offset->max_ns) +
        " from the daemon's";
    if (offset->min_ns > limit_ns || offset->max_ns < -limit_ns)
        return problem(k_doctor_clock, seen + ", more than " + std::to_string(k_doctor_max_clock_offset_ms) + " ms",
                       "synchronise the engine host's clock (e.g. systemd-timesyncd or chrony)");
    if (offset->min_ns < -limit_ns || offset->max_ns > limit_ns)
        return unknown(k_doctor_clock, seen + ": the measurement is too wide to compare with " +
                                           std::to_string(k_doctor_max_clock_offset_ms) + " ms");
    return ok(k_doctor_clock, seen);
}

}  // namespace pybox::daemon
