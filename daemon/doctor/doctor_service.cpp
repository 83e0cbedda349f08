#include "daemon/doctor/doctor_service.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "common/file_facts.hpp"
#include "common/limits.hpp"
#include "common/process.hpp"
#include "daemon/run/box_spec.hpp"
#include "daemon/engine/engine_clock.hpp"

#include <filesystem>
#include <system_error>

namespace pybox::daemon {

namespace fs = std::filesystem;

namespace {

Expected<std::uint64_t> available_bytes(const fs::path& root)
{
    std::error_code ec;
    const auto space = fs::space(root, ec);
    if (ec) return make_error(api_error::k_free_space_unknown, "the free space of " + root.string() + " was not read: " + ec.message());
    return static_cast<std::uint64_t>(space.available);
}

bool is_folder(const fs::path& path)
{
    std::error_code ec;
    return fs::is_directory(path, ec);
}

}  // namespace

net::awaitable<proto::DoctorAnswer> DoctorService::check(std::optional<std::uint32_t> viewer)
{
    const auto& root = m_sources.paths.root();
    proto::DoctorAnswer answer;
    answer.checks.push_back(check_engine(co_await m_sources.engine_control.status()));
    answer.checks.push_back(check_runtime_folder(root, file_facts(root), current_uid()));
    answer.checks.push_back(check_free_space(root, available_bytes(root)));
    const auto images = co_await check_recorded_images();
    answer.checks.push_back(check_images(images));

    const std::int64_t before_ns = unix_nanoseconds(WallClock::now());
    const auto info = co_await m_sources.engine.client().info(limits::k_query_timeout);
    const std::int64_t after_ns = unix_nanoseconds(WallClock::now());
    answer.checks.push_back(check_seccomp(info));
    answer.checks.push_back(check_cgroups(info, watcher_view()));
    const auto boxes = co_await labelled_boxes();
    answer.checks.push_back(check_leftover_boxes(boxes, m_sources.engine.describe()));
    answer.checks.push_back(check_attempts(m_sources.attempts.list(viewer), m_sources.paths.attempts_dir()));
    answer.checks.push_back(check_clock(
        info ? engine::engine_clock_offset(before_ns, *info, after_ns)
             : Expected<proto::ClockOffset>(make_error(api_error::k_clock_unmeasured, "the engine's /info was not read: " +
                                                                               info.error().message))));
    co_return answer;
}

net::awaitable<Expected<std::vector<ImageVerdict>>> DoctorService::check_recorded_images()
{
    auto records = m_sources.registry.load();
    if (!records) co_return records.error();
    std::vector<ImageVerdict> verdicts;
    for (const auto& record : *records) {
        auto verified = co_await images::verify_image_for_run(
            m_sources.registry,
            [this](const images::ImageRecord& recorded) { return m_sources.engine.image_state(recorded); },
            record.name);
        verdicts.push_back({record.name, verified ? Expected<void>() : Expected<void>(verified.error())});
    }
    co_return verdicts;
}

net::awaitable<Expected<std::vector<LabelledBox>>> DoctorService::labelled_boxes()
{
    // A run that starts or ends while the engine answers holds its box in one of the two looks.
    const auto held_before = m_sources.runs.ids();
    const std::vector<std::string> filters{std::string(k_label_owner) + "=" + m_sources.installation_id};
    auto listed = co_await m_sources.engine.client().list_containers(filters, limits::k_query_timeout);
    if (!listed) co_return listed.error();
    std::vector<LabelledBox> boxes;
    for (const auto& box : *listed) {
        // The engine filtered by label; check again, as the sweep does.
        if (box.label(k_label_owner) != m_sources.installation_id) continue;
        const std::string run_id = box.label(k_label_run);
        boxes.push_back({box.id, run_id,
                         held_before.contains(run_id) || m_sources.runs.contains(run_id)});
    }
    co_return boxes;
}

WatcherView DoctorService::watcher_view() const
{
    const fs::path root = m_sources.cgroup_mount_root;
    std::error_code ec;
    return WatcherView{m_sources.watcher_off_reason, root.string(),
                       is_folder(root / "memory") && is_folder(root / "pids") && is_folder(root / "cpuacct"),
                       fs::exists(root / "cgroup.controllers", ec),
                       m_sources.watcher_elsewhere ? std::optional<std::string>(m_sources.watcher_elsewhere->describe())
                                                   : std::nullopt};
}

}  // namespace pybox::daemon
