// DoctorService: GET /v1/doctor. Gathers what each of `pybox doctor`'s daemon-side checks looks
// at (docs/doctor.md): the engine's status as `pybox vm status` answers it, the runtime folder
// (lstat, free space), every recorded image through the pre-run check on the local engine's
// backend, the local engine's GET /info (seccomp, cgroups, clock offset) and its boxes with
// this installation's label (the local engine is a Docker engine by nature: these go through its
// DockerBackend's client), and the attempt notes; doctor_checks.hpp decides each verdict.
//
// Ownership: borrows everything in DoctorSources, which must outlive it. Executor: the daemon's
// io_context; file calls are a few small, non-blocking-in-practice reads (lstat, statvfs, the
// small images.json and lock files, as every run makes). Timeouts: each engine call has
// limits::k_query_timeout (the image checks theirs), so an engine that does not answer costs a
// few of those and yields "unknown" verdicts, never an error.
#pragma once

#include "common/paths.hpp"
#include "daemon/doctor/doctor_checks.hpp"
#include "daemon/engine/docker_backend.hpp"
#include "daemon/images/image_registry.hpp"
#include "daemon/records/attempts.hpp"
#include "daemon/server/services.hpp"
#include "daemon/watcher/cgroup_host.hpp"

#include <optional>
#include <string>

namespace pybox::daemon {

struct DoctorSources {
    RuntimePaths paths;
    EngineControl& engine_control;  // the pool's when there is one: its status covers every engine
    engine::DockerBackend& engine;  // the local engine
    images::ImageRegistry registry;
    AttemptRecords& attempts;
    const RunsInProgress& runs;
    std::string installation_id;
    std::optional<std::string> watcher_off_reason;  // WatchSetup::off_reason when its host is null
    std::string cgroup_mount_root = "/sys/fs/cgroup";
    // The watcher's host when it is not this machine's cgroup files (macOS: the colima VM).
    const watcher::CgroupHost* watcher_elsewhere = nullptr;
};

class DoctorService final : public Doctor {
public:
    explicit DoctorService(DoctorSources sources) : m_sources(std::move(sources)) {}
    net::awaitable<proto::DoctorAnswer> check(std::optional<std::uint32_t> viewer) override;

private:
    net::awaitable<Expected<std::vector<ImageVerdict>>> check_recorded_images();
    net::awaitable<Expected<std::vector<LabelledBox>>> labelled_boxes();
    WatcherView watcher_view() const;

    DoctorSources m_sources;
};

}  // namespace pybox::daemon
