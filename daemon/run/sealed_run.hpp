// SealedRunService: sealed runs one at a time (docs/how-it-works.md, "One sealed run").
//
// Owns nothing it is given: the engine, the image check and the reconciliation summary
// must outlive it. Runs on the daemon's io_context (single-threaded); concurrent run() calls
// take turns in the run queue (run_queue.hpp: bounded, in arrival order; a full queue or a
// turn that does not come in time is "busy"). The time in the queue is the receipt's
// lifecycle.timing.queued_s and is not part of the run's own timings. Every engine call has
// its budget from common/limits.hpp. Once the attempt note is written, run() always returns a
// receipt: a refusal, a crash, a deadline kill or a lost engine is recorded, never thrown.
// Errors before that point (bad request, busy, engine unreachable, image not built or changed,
// an attempt note the runtime folder cannot take) create nothing. A box whose removal a run
// could not confirm is removed again at the start of the next run that finds the engine
// answering.
//
// Warm boxes (box_run.hpp): with `warm.count` above 0, keep_warm() keeps that many boxes of
// the most recently run image created, verified and started ahead of the requests, one at a
// time and never while a run holds its turn; a run that can use one (the same image, verified
// again right before; no files; the box still running and ending before its expiry label)
// takes it, else it waits for the one being prepared for its image, else it runs cold. Each
// box is used once. A run that found a box waiting for less than k_warm_series_gap, or none,
// is taken for one of a series (a developer's loop): the next box is then begun at once, beside
// it, instead of after it. A warm box is replaced k_warm_box_renewed_before_expiry_s before its
// expiry label; stop_warm() removes them all (the daemon stopping). A daemon that dies leaves
// them to the sweep: they carry the labels and attempt notes of every box.
//
// The kernel watcher (run_watch.hpp) observes each box as `watch` says; without a CgroupHost
// the watcher is switched off and resources are UNKNOWN. The engine's cgroup version and driver are
// read from GET /info at the first run and kept; a failed read is retried at the next run.
#pragma once

#include "common/limits.hpp"
#include "daemon/engine/box_engine.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/run/attempts.hpp"
#include "daemon/run/box_run.hpp"
#include "daemon/run/box_spec.hpp"
#include "daemon/run/run_cgroup.hpp"
#include "daemon/run/run_queue.hpp"
#include "daemon/run/run_watch.hpp"
#include "daemon/server/services.hpp"

#include <boost/asio/steady_timer.hpp>

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pybox::daemon {

// Checks an image name against the image registry and the engine right before a run.
using ImageVerifier = std::function<net::awaitable<Expected<VerifiedImage>>(std::string name)>;
// The latest summary of the sweep of leftover boxes, for the receipt's cleanup section.
using ReconciliationSummary = std::function<json::value()>;

// How many warm boxes to keep (config.json warm_boxes; 0 = every run cold).
struct WarmSetup {
    int count = 0;
    std::uint32_t owner_uid = 0;  // whose runs may take them: the daemon's user (owner mode only)
};

class SealedRunService final : public RunService {
public:
    SealedRunService(net::any_io_executor executor, engine::BoxEngine& engine, BoxRuntime runtime,
                     ImageVerifier verify_image, AttemptTracking attempts, std::string installation_id,
                     ReconciliationSummary reconciliation, WatchSetup watch, RunQueueOptions queue = {},
                     WarmSetup warm = {});

    net::awaitable<Expected<proto::RunAnswer>> run(proto::ValidRunRequest request, std::uint32_t owner_uid,
                                                   net::cancellation_slot cancelled) override;

    // Keeps the warm boxes until stop_warm(); returns at once when there are to be none.
    net::awaitable<void> keep_warm();
    // Ends keep_warm() and removes the warm boxes it holds (awaiting their removal).
    net::awaitable<void> stop_warm();
    // Removes the warm boxes (awaiting their removal, and the end of one being made) and makes
    // none until resume_warm(); runs meanwhile go cold. Pauses nest.
    net::awaitable<void> pause_warm();
    void resume_warm();
    // Makes the missing warm boxes now, not at the keeper's next retry (an engine came up).
    void wake_warm() { m_warm_wakeup.cancel(); }

private:
    // Boxes whose removal a run could not confirm (the engine went away) are removed again before
    // the next run, once the engine answers; at most this many are remembered (the oldest
    // dropped), and the sweep removes any box after its expiry in any case.
    static constexpr std::size_t k_max_unconfirmed_boxes = 64;
    void remember_unconfirmed_box(const std::string& container_id);
    // The box of a run or of a warm box that could not be made, when its removal was not confirmed.
    void remember_if_unconfirmed(const proto::Receipt& receipt);
    net::awaitable<void> remove_unconfirmed_boxes();

    // What every box needs before it is made: the engine's API version, the image verified, the
    // boxes of earlier runs removed, the engine's cgroup facts.
    net::awaitable<Expected<VerifiedImage>> check_before_box(const std::string& image_name);
    // Names the box, gives it its run parent and notes the attempt; an Error creates nothing.
    net::awaitable<Expected<void>> open_box(BoxRun& box, std::uint32_t owner_uid, const VerifiedImage& image);

    net::awaitable<Expected<std::unique_ptr<BoxRun>>> prepare_warm_box(std::string image_name);
    // A ready warm box for this request, or null (run cold).
    net::awaitable<std::unique_ptr<BoxRun>> take_warm_box(const proto::RunRequest& request, std::uint32_t owner_uid,
                                                          const VerifiedImage& image);
    void discard_later(std::unique_ptr<BoxRun> box);
    net::awaitable<void> remove_warm_boxes();

    net::any_io_executor m_executor;
    engine::BoxEngine& m_engine;
    WatchSetup m_watch;
    std::optional<Expected<CgroupFacts>> m_cgroup_facts;
    BoxRuntime m_runtime;
    ImageVerifier m_verify_image;
    AttemptTracking m_attempts;
    std::string m_installation_id;
    ReconciliationSummary m_reconciliation;
    RunQueue m_queue;
    std::vector<std::string> m_unconfirmed_boxes;  // container IDs, oldest first

    WarmSetup m_warm_setup;
    std::string m_warm_image = "stdlib";      // the image warm boxes are made of: the last one run
    std::deque<std::unique_ptr<BoxRun>> m_warm;  // ready, oldest first
    bool m_warm_preparing = false;
    // The latest run came in a series (took a box that waited less than k_warm_series_gap, or
    // found none ready): the keeper makes the next box at once, beside the run.
    bool m_warm_series = false;
    bool m_warm_stopping = false;
    int m_warm_paused = 0;
    net::steady_timer m_warm_wakeup;   // the keeper's wait: a run ended, a box is due for renewal
    net::steady_timer m_warm_changed;  // runs waiting for the box being prepared
};

}  // namespace pybox::daemon
