#include "daemon/run/sealed_run.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"
#include "common/limits.hpp"
#include "daemon/run/box_removal.hpp"

#include <iostream>
#include <utility>

namespace pybox::daemon {

namespace {

// Errors that stop a run before anything is created: an unreachable engine says how to start it,
// whichever call found it gone.
Error with_engine_hint(Error error)
{
    if (error.code == api_error::k_engine_unreachable) error.message += " Is the engine running? Start it with: pybox vm start";
    return error;
}

}  // namespace

SealedRunService::SealedRunService(net::any_io_executor executor, engine::BoxEngine& engine,
                                   engine::EngineProbe& probe, ImageVerifier verify_image, AttemptTracking attempts, std::string installation_id,
                                   ReconciliationSummary reconciliation, WatchSetup watch, RunQueueOptions queue,
                                   WarmSetup warm)
    : m_executor(executor), m_engine(engine), m_probe(probe), m_watch(std::move(watch)),
      m_verify_image(std::move(verify_image)),
      m_attempts(std::move(attempts)), m_installation_id(std::move(installation_id)),
      m_reconciliation(std::move(reconciliation)), m_queue(executor, queue),
      m_warm(executor, warm, m_attempts.box_expiry_s, m_queue, [this](std::string image, std::uint32_t owner_uid) {
          return prepare_warm_box(std::move(image), owner_uid);
      })
{
}

net::awaitable<Expected<AssembledRun>> SealedRunService::run(proto::ValidRunRequest valid, std::uint32_t owner_uid,
                                                             net::cancellation_slot cancelled, RunObserver* observer)
{
    const auto arrived = MonoClock::now();
    const proto::BoxPolicy policy = valid.policy();
    proto::RunRequest request = std::move(valid).release();

    bool disconnected = false;
    BoxRun* box = nullptr;  // once chosen: the client's disconnect kills its box
    net::cancellation_signal leave_queue;
    if (cancelled.is_connected())
        cancelled.assign([&](net::cancellation_type type) {
            disconnected = true;
            leave_queue.emit(type);
            if (box != nullptr) box->cancel();
        });
    struct SlotRelease {
        net::cancellation_slot slot;
        ~SlotRelease() { if (slot.is_connected()) slot.clear(); }
    } release{cancelled};

    auto turn = co_await m_queue.wait_turn(owner_uid, leave_queue.slot());
    if (!turn) co_return turn.error();
    if (disconnected) co_return make_error(api_error::k_client_disconnected, "The client went away before the run began.");
    // The next warm box is made once this run has ended (its turn released), off its path.
    struct WakeKeeperAfter {
        SealedRunService& service;
        ~WakeKeeperAfter() { service.wake_warm(); }
    } wake_keeper{*this};

    auto image = co_await check_before_box(request.image);
    if (!image) co_return with_engine_hint(image.error());
    if (!request.files) m_warm.want(request.image);

    std::unique_ptr<BoxRun> warm = co_await m_warm.take(request, owner_uid, *image);
    if (disconnected) {
        if (warm) m_warm.discard_later(std::move(warm));
        co_return make_error(api_error::k_client_disconnected, "The client went away before the run began.");
    }
    // In a series the next box is begun now, beside this run, not after it.
    if (m_warm.in_series()) wake_warm();
    if (warm) {
        box = warm.get();
        warm->adopt(std::move(request), arrived);
        warm->observe(observer);
        co_await warm->execute_warm();
    } else {
        auto cold = std::make_unique<BoxRun>(m_executor, m_engine, m_probe, m_attempts, std::move(request), policy,
                                             m_watch, BoxKind::cold);
        cold->begin_after(arrived);
        auto opened = co_await open_box(*cold, owner_uid, *image);
        if (!opened)
            co_return make_error(opened.error().code, "Nothing was run: PyBox notes each run in the runtime folder "
                                                      "before it creates a box, and that failed. " +
                                                          opened.error().message);
        box = cold.get();
        cold->observe(observer);
        if (disconnected) cold->cancel();
        co_await cold->execute();
        warm = std::move(cold);
    }
    box = nullptr;
    remember_if_unconfirmed(*warm);
    warm->note_reconciliation(m_reconciliation ? m_reconciliation() : json::value(nullptr));
    co_return warm->assemble();
}

net::awaitable<Expected<VerifiedImage>> SealedRunService::check_before_box(const std::string& image_name)
{
    auto ready = co_await m_probe.prepare(limits::k_query_timeout);
    if (!ready) co_return ready.error();
    auto image = co_await m_verify_image(image_name);
    if (!image) co_return image.error();
    co_await remove_unconfirmed_boxes();
    if (m_watch.host != nullptr && !m_cgroup_facts) {
        // What the engine's answer lacks is kept; a call that failed is tried again at the next run.
        auto facts = co_await m_probe.cgroup_facts(limits::k_query_timeout);
        if (facts || facts.error().code == api_error::k_cgroup_unknown) m_cgroup_facts = std::move(facts);
    }
    co_return *image;
}

net::awaitable<Expected<void>> SealedRunService::open_box(BoxRun& box, std::uint32_t owner_uid,
                                                         const VerifiedImage& image)
{
    box.identify(m_installation_id, owner_uid, image);
    const auto cgroups =
        m_cgroup_facts ? *m_cgroup_facts
                       : Expected<CgroupFacts>(make_error(api_error::k_cgroup_unknown, "the engine's cgroups were not read"));
    co_await box.prepare_watch(cgroups);
    co_return box.write_attempt();
}

net::awaitable<Expected<std::unique_ptr<BoxRun>>> SealedRunService::prepare_warm_box(std::string image_name,
                                                                                     std::uint32_t owner_uid)
{
    auto policy = proto::policy_for_image(image_name);
    if (!policy) co_return make_error(api_error::k_unknown_image, "There is no image named \"" + image_name + "\".");
    auto image = co_await check_before_box(image_name);
    if (!image) co_return image.error();
    proto::RunRequest placeholder;
    placeholder.image = image_name;
    // Off the request's path, the start may take as long as the longest deadline allows a cold
    // box's (a loaded engine); adopt() puts the request's own deadline in.
    placeholder.timeout_s = limits::k_max_timeout_s;
    auto box = std::make_unique<BoxRun>(m_executor, m_engine, m_probe, m_attempts, std::move(placeholder), *policy,
                                        m_watch, BoxKind::warm);
    auto opened = co_await open_box(*box, owner_uid, *image);
    if (!opened) co_return opened.error();
    const bool ready = co_await box->prepare();
    if (!ready) {
        // A box whose removal was not confirmed is removed again before the next box or run.
        remember_if_unconfirmed(*box);
        co_return make_error(api_error::k_warm_box_failed, box->why_not_prepared());
    }
    co_return std::move(box);
}

void SealedRunService::remember_if_unconfirmed(const BoxRun& box)
{
    if (auto id = box.unconfirmed_box()) remember_unconfirmed_box(*id);
}

void SealedRunService::remember_unconfirmed_box(const std::string& container_id)
{
    if (m_unconfirmed_boxes.size() == k_max_unconfirmed_boxes) m_unconfirmed_boxes.erase(m_unconfirmed_boxes.begin());
    m_unconfirmed_boxes.push_back(container_id);
}

net::awaitable<void> SealedRunService::remove_unconfirmed_boxes()
{
    // The warm keeper and a run may be here at once: each removes the boxes it took out of the list.
    const std::vector<std::string> boxes = std::exchange(m_unconfirmed_boxes, {});
    std::vector<std::string> still_there;
    for (const auto& id : boxes) {
        const std::vector<std::string> box{id};  // named: GCC 12 miscompiles braced lists in co_await calls
        const RemovalOutcome removal = co_await remove_boxes(m_engine, box, limits::k_cleanup_budget);
        if (removal.all_gone) {
            std::cerr << "pyboxd: removed box " << id.substr(0, 12) << ", left by a run that lost its engine\n";
            continue;
        }
        auto check = co_await m_engine.inspect_box(id, limits::k_inspect_timeout);
        if (check || check.error().code != api_error::k_engine_no_such_object) still_there.push_back(id);  // else: swept meanwhile
    }
    for (auto& id : still_there) remember_unconfirmed_box(id);
}

}  // namespace pybox::daemon
