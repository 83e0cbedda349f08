#include "daemon/run/sealed_run.hpp"

#include "common/clock.hpp"
#include "common/limits.hpp"
#include "daemon/run/box_removal.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <utility>

namespace pybox::daemon {

using proto::CleanupStatus;

namespace {

// Errors that stop a run before anything is created: an unreachable engine says how to start it,
// whichever call found it gone.
Error with_engine_hint(Error error)
{
    if (error.code == "engine_unreachable") error.message += " Is the engine running? Start it with: pybox vm start";
    return error;
}

}  // namespace

SealedRunService::SealedRunService(net::any_io_executor executor, engine::BoxEngine& engine, BoxRuntime runtime,
                                   ImageVerifier verify_image, AttemptTracking attempts, std::string installation_id,
                                   ReconciliationSummary reconciliation, WatchSetup watch, RunQueueOptions queue,
                                   WarmSetup warm)
    : m_executor(executor), m_engine(engine), m_watch(std::move(watch)), m_runtime(std::move(runtime)),
      m_verify_image(std::move(verify_image)),
      m_attempts(std::move(attempts)), m_installation_id(std::move(installation_id)),
      m_reconciliation(std::move(reconciliation)), m_queue(executor, queue), m_warm_setup(warm),
      m_warm_image(proto::RunRequest{}.image), m_warm_wakeup(executor), m_warm_changed(executor)
{
    // A warm box must be able to wait a little and still take the longest run before its expiry.
    if (m_attempts.box_expiry_s < limits::k_warm_box_renewed_before_expiry_s + limits::k_min_warm_box_wait_s)
        m_warm_setup.count = 0;
}

net::awaitable<Expected<proto::RunAnswer>> SealedRunService::run(proto::ValidRunRequest valid, std::uint32_t owner_uid,
                                                                 net::cancellation_slot cancelled)
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
    if (disconnected) co_return make_error("client_disconnected", "The client went away before the run began.");
    // The next warm box is made once this run has ended (its turn released), off its path.
    struct WakeKeeperAfter {
        SealedRunService& service;
        ~WakeKeeperAfter() { service.wake_warm(); }
    } wake_keeper{*this};

    auto image = co_await check_before_box(request.image);
    if (!image) co_return with_engine_hint(image.error());
    if (!request.files) m_warm_image = request.image;

    std::unique_ptr<BoxRun> warm = co_await take_warm_box(request, owner_uid, *image);
    if (disconnected) {
        if (warm) discard_later(std::move(warm));
        co_return make_error("client_disconnected", "The client went away before the run began.");
    }
    // In a series the next box is begun now, beside this run, not after it.
    if (m_warm_series) wake_warm();
    if (warm) {
        box = warm.get();
        warm->adopt(std::move(request), arrived);
        co_await warm->execute_warm();
    } else {
        auto cold = std::make_unique<BoxRun>(m_executor, m_engine, m_attempts, std::move(request), policy, m_runtime,
                                             m_watch, BoxKind::cold);
        cold->begin_after(arrived);
        auto opened = co_await open_box(*cold, owner_uid, *image);
        if (!opened)
            co_return make_error(opened.error().code, "Nothing was run: PyBox notes each run in the runtime folder "
                                                      "before it creates a box, and that failed. " +
                                                          opened.error().message);
        box = cold.get();
        if (disconnected) cold->cancel();
        co_await cold->execute();
        warm = std::move(cold);
    }
    box = nullptr;
    auto& receipt = warm->receipt();
    remember_if_unconfirmed(receipt);
    receipt.cleanup.reconciliation = m_reconciliation ? m_reconciliation() : json::value(nullptr);
    co_return proto::RunAnswer{std::move(receipt), std::move(warm->output_files())};
}

net::awaitable<Expected<VerifiedImage>> SealedRunService::check_before_box(const std::string& image_name)
{
    // The daemon negotiates the Engine API version at start and whenever `vm start` or
    // `vm status` checks the engine; this covers an engine that came up since without either.
    if (m_engine.api_version().empty()) {
        auto pinged = co_await m_engine.ping(limits::k_query_timeout);
        if (!pinged) co_return pinged.error();
    }
    auto image = co_await m_verify_image(image_name);
    if (!image) co_return image.error();
    co_await remove_unconfirmed_boxes();
    if (m_watch.host != nullptr && !m_cgroup_facts) {
        auto info = co_await m_engine.info(limits::k_query_timeout);
        if (info) m_cgroup_facts = cgroup_facts_from_info(*info);
    }
    co_return *image;
}

net::awaitable<Expected<void>> SealedRunService::open_box(BoxRun& box, std::uint32_t owner_uid,
                                                         const VerifiedImage& image)
{
    box.identify(m_installation_id, owner_uid, image);
    const auto cgroups =
        m_cgroup_facts ? *m_cgroup_facts
                       : Expected<CgroupFacts>(make_error("cgroup_unknown", "the engine's /info was not read"));
    co_await box.prepare_watch(cgroups);
    co_return box.write_attempt();
}

net::awaitable<Expected<std::unique_ptr<BoxRun>>> SealedRunService::prepare_warm_box(std::string image_name)
{
    auto policy = proto::policy_for_image(image_name);
    if (!policy) co_return make_error("unknown_image", "There is no image named \"" + image_name + "\".");
    auto image = co_await check_before_box(image_name);
    if (!image) co_return image.error();
    proto::RunRequest placeholder;
    placeholder.image = image_name;
    // Off the request's path, the start may take as long as the longest deadline allows a cold
    // box's (a loaded engine); adopt() puts the request's own deadline in.
    placeholder.timeout_s = limits::k_max_timeout_s;
    auto box = std::make_unique<BoxRun>(m_executor, m_engine, m_attempts, std::move(placeholder), *policy, m_runtime,
                                        m_watch, BoxKind::warm);
    auto opened = co_await open_box(*box, m_warm_setup.owner_uid, *image);
    if (!opened) co_return opened.error();
    const bool ready = co_await box->prepare();
    if (!ready) {
        // A box whose removal was not confirmed is removed again before the next box or run.
        const auto& receipt = box->receipt();
        remember_if_unconfirmed(receipt);
        const auto& explanations = receipt.explanations;
        co_return make_error("warm_box_failed", explanations.empty() ? std::string("the box could not be prepared")
                                                                     : explanations.front().message);
    }
    co_return std::move(box);
}

net::awaitable<std::unique_ptr<BoxRun>> SealedRunService::take_warm_box(const proto::RunRequest& request,
                                                                        std::uint32_t owner_uid,
                                                                        const VerifiedImage& image)
{
    m_warm_series = false;
    // A warm box is labelled with its user when it is made: only that user's runs take it.
    if (m_warm_setup.count == 0 || request.files || m_warm_paused > 0 || owner_uid != m_warm_setup.owner_uid)
        co_return nullptr;
    const auto give_up = MonoClock::now() + limits::k_warm_box_longest_wait;
    // Unless a box waited at least k_warm_series_gap for this run, runs come one after another.
    m_warm_series = true;
    for (;;) {
        if (request.image != m_warm_image) co_return nullptr;
        while (!m_warm.empty()) {
            std::unique_ptr<BoxRun> box = std::move(m_warm.front());
            m_warm.pop_front();
            const auto& identity = box->receipt().identity;
            // An image rebuilt since the box was made (another ID or recipe) retires it.
            if (identity.image == request.image && identity.image_id == image.image_id &&
                identity.recipe_sha256 == image.recipe_sha256) {
                const bool usable = co_await box->still_usable(request.timeout_s);
                if (usable) {
                    m_warm_series = box->waiting_for() < limits::k_warm_series_gap;
                    co_return box;
                }
            }
            discard_later(std::move(box));
        }
        if (!m_warm_preparing || MonoClock::now() >= give_up) co_return nullptr;
        m_warm_changed.expires_at(give_up);
        (void)co_await m_warm_changed.async_wait(net::as_tuple(net::use_awaitable));
    }
}

void SealedRunService::discard_later(std::unique_ptr<BoxRun> box)
{
    auto discard = [](std::unique_ptr<BoxRun> doomed) -> net::awaitable<void> { co_await doomed->discard(); };
    net::co_spawn(m_executor, discard(std::move(box)), net::detached);
}

net::awaitable<void> SealedRunService::keep_warm()
{
    auto retry_after = limits::k_warm_retry_first;
    std::string last_failure;
    while (m_warm_setup.count > 0 && !m_warm_stopping) {
        // Boxes due for renewal go; so do boxes of an image no longer wanted.
        const auto now = unix_seconds(WallClock::now());
        std::erase_if(m_warm, [&](std::unique_ptr<BoxRun>& box) {
            const bool due = now >= box->expires_at() - limits::k_warm_box_renewed_before_expiry_s ||
                             box->receipt().identity.image != m_warm_image;
            if (due) discard_later(std::move(box));
            return due;
        });
        auto next_wake = std::chrono::steady_clock::now() + std::chrono::hours(1);
        const bool may_make = m_warm_series || !m_queue.running();
        if (std::ssize(m_warm) < m_warm_setup.count && may_make && m_warm_paused == 0 && m_queue.waiting() == 0) {
            m_warm_preparing = true;
            auto prepared = co_await prepare_warm_box(m_warm_image);
            // Stopped or paused meanwhile: the box goes before anyone waiting learns it is done.
            const bool unwanted = prepared && (m_warm_stopping || m_warm_paused > 0);
            if (unwanted) co_await (*prepared)->discard();
            m_warm_preparing = false;
            m_warm_changed.cancel();
            if (m_warm_stopping) break;
            if (unwanted) continue;
            if (prepared) {
                m_warm.push_back(std::move(*prepared));
                retry_after = limits::k_warm_retry_first;
                last_failure.clear();
                continue;
            }
            if (prepared.error().message != last_failure) {
                last_failure = prepared.error().message;
                std::cerr << "pyboxd: no warm box for now (runs go cold): " << last_failure << "\n";
            }
            next_wake = std::chrono::steady_clock::now() + retry_after;
            retry_after = std::min(retry_after * 2, limits::k_warm_retry_longest);
        } else if (!m_warm.empty()) {
            const auto renew_in = m_warm.front()->expires_at() - limits::k_warm_box_renewed_before_expiry_s - now;
            next_wake = std::chrono::steady_clock::now() + std::chrono::seconds(std::max<std::int64_t>(renew_in, 0));
        }
        if (m_warm_stopping) break;
        m_warm_wakeup.expires_at(next_wake);
        (void)co_await m_warm_wakeup.async_wait(net::as_tuple(net::use_awaitable));
    }
    co_await remove_warm_boxes();
}

net::awaitable<void> SealedRunService::stop_warm()
{
    m_warm_stopping = true;
    m_warm_wakeup.cancel();
    co_await remove_warm_boxes();
}

net::awaitable<void> SealedRunService::pause_warm()
{
    ++m_warm_paused;
    // A box being made is kept by the keeper only while nothing pauses it (keep_warm()).
    net::steady_timer poll(m_executor);
    while (m_warm_preparing) {
        poll.expires_after(std::chrono::milliseconds(20));
        (void)co_await poll.async_wait(net::as_tuple(net::use_awaitable));
    }
    co_await remove_warm_boxes();
}

void SealedRunService::resume_warm()
{
    if (m_warm_paused > 0) --m_warm_paused;
    wake_warm();
}

net::awaitable<void> SealedRunService::remove_warm_boxes()
{
    while (!m_warm.empty()) {
        std::unique_ptr<BoxRun> box = std::move(m_warm.front());
        m_warm.pop_front();
        co_await box->discard();
    }
}

void SealedRunService::remember_if_unconfirmed(const proto::Receipt& receipt)
{
    if (receipt.cleanup.status == CleanupStatus::removal_unconfirmed && !receipt.container_id.empty())
        remember_unconfirmed_box(receipt.container_id);
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
        if (check || check.error().code != "engine_no_such_object") still_there.push_back(id);  // else: swept meanwhile
    }
    for (auto& id : still_there) remember_unconfirmed_box(id);
}

}  // namespace pybox::daemon
