// The verdicts of `pybox doctor`'s daemon-side checks (GET /v1/doctor, docs/doctor.md), as pure
// functions of what was observed: observations in, one proto::DoctorCheck out (verdict, what
// was seen, and for a problem the fix in one line). No I/O: DoctorService gathers the
// observations; these decide. An observation that could not be made (the engine does not
// answer, a file cannot be read) is "unknown" with why, never "ok".
#pragma once

#include "common/error.hpp"
#include "common/file_facts.hpp"
#include "proto/answers.hpp"
#include "proto/receipt.hpp"

#include "daemon/engine/engine_facts.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::daemon {

// The runtime folder's file system must have at least this much free (the data image's build
// needs about 1.2 GB; docs/doctor.md repeats the figure).
inline constexpr std::uint64_t k_doctor_min_free_bytes = std::uint64_t{2} << 30;
// The engine's clock may be this far from the daemon's before receipts' engine times are off.
inline constexpr std::int64_t k_doctor_max_clock_offset_ms = 1000;


// `pybox vm status`'s answer: the local engine and every engine of the pool that takes runs.
proto::DoctorCheck check_engine(const proto::EngineStatus& status);

// The runtime folder must be a folder of mode 0700 owned by `uid` (the daemon's user).
proto::DoctorCheck check_runtime_folder(const std::filesystem::path& root, const std::optional<FileFacts>& facts,
                                        unsigned uid);

// `available`: the bytes free to the daemon's user on the runtime folder's file system.
proto::DoctorCheck check_free_space(const std::filesystem::path& root, const Expected<std::uint64_t>& available);

// One recorded image and the outcome of the pre-run check (images::verify_image_for_run) on it.
struct ImageVerdict {
    std::string name;
    Expected<void> verified;
};
// `images`: every image images.json records, checked; an Error when images.json cannot be read.
proto::DoctorCheck check_images(const Expected<std::vector<ImageVerdict>>& images);

// `info`: the engine's GET /info (its SecurityOptions), or why it was not read.
proto::DoctorCheck check_seccomp(const Expected<engine::EngineInfo>& info);

// How the kernel watcher of the local engine's runs sees the cgroups: switched off (and why),
// and whether its mount root shows the hierarchy the engine reports.
struct WatcherView {
    std::optional<std::string> off_reason;
    std::string mount_root;
    bool v1_controllers_seen = false;  // <mount_root>/memory, pids and cpuacct are folders
    bool v2_unified_seen = false;      // <mount_root>/cgroup.controllers exists
    // The watcher reads another machine's cgroup files (macOS: the colima VM): its description.
    std::optional<std::string> elsewhere;
};
proto::DoctorCheck check_cgroups(const Expected<engine::EngineInfo>& info, const WatcherView& watcher);

// A box on the engine that carries this installation's owner label.
struct LabelledBox {
    std::string id;
    std::string run_id;  // its pybox.run label
    bool owned = false;  // a run or warm box of this daemon holds it
};
// `engine_address` names the engine in the fix (docker -H <address> rm -f ...).
proto::DoctorCheck check_leftover_boxes(const Expected<std::vector<LabelledBox>>& boxes,
                                        std::string_view engine_address);

// GET /v1/attempts's answer: notes of runs no longer in progress are unsettled attempts.
proto::DoctorCheck check_attempts(const Expected<proto::AttemptsAnswer>& attempts,
                                  const std::filesystem::path& attempts_dir);

// The engine's clock offset (engine_clock.hpp), or why it was not measured.
proto::DoctorCheck check_clock(const Expected<proto::ClockOffset>& offset);

}  // namespace pybox::daemon
