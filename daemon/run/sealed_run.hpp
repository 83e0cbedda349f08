// SealedRunService: sealed runs one at a time (docs/how-it-works.md, "One sealed run").
//
// Owns nothing it is given: the engine, the image check and the reconciliation summary
// must outlive it. Runs on the daemon's io_context (single-threaded); concurrent run() calls
// take turns in the run queue (run_queue.hpp: bounded, in arrival order; a full queue or a
// turn that does not come in time is "busy"). The time in the queue is the receipt's
// lifecycle.timing.queued_s and is not part of the run's own timings. Every engine call has
// its budget from common/limits.hpp. Once the attempt note is written, run() always returns a
// receipt: a refusal, a crash, a deadline kill or a lost engine is recorded, never thrown.
// Errors before that point (busy, engine unreachable, image not built or changed, an attempt
// note the runtime folder cannot take) create nothing. The receipt is assembled once, from the
// run's evidence and the latest reconciliation summary, and answered unissued (an
// EngineRunService: engine_run_service.hpp). The request was checked by its parser
// (proto::ValidRunRequest), and its box policy comes with it. A box whose removal a run
// could not confirm is removed again at the start of the next run that finds the engine
// answering.
//
// Warm boxes (box_run.hpp): a WarmBoxKeeper (warm_box_keeper.hpp) keeps `warm.count` of them,
// made by this service as a cold box is, up to its start; a run that can use one takes it, else
// it runs cold. keep_warm(), stop_warm(), pause_warm(), resume_warm() and wake_warm() are the
// keeper's.
//
// The kernel watcher (run_watch.hpp) observes each box as `watch` says; without a CgroupHost
// the watcher is switched off and resources are UNKNOWN. The engine's cgroup version and driver are
// read from its probe at the first run and kept; a failed read is retried at the next run.
#pragma once

#include "common/limits.hpp"
#include "daemon/engine/box_engine.hpp"
#include "daemon/engine/engine_probe.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/records/attempts.hpp"
#include "daemon/run/box_run.hpp"
#include "daemon/run/box_spec.hpp"
#include "daemon/run/engine_run_service.hpp"
#include "daemon/run/run_cgroup.hpp"
#include "daemon/run/run_queue.hpp"
#include "daemon/run/run_watch.hpp"
#include "daemon/run/warm_box_keeper.hpp"
#include "daemon/server/services.hpp"

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

class SealedRunService final : public EngineRunService {
public:
    SealedRunService(net::any_io_executor executor, engine::BoxEngine& engine, engine::EngineProbe& probe,
                     ImageVerifier verify_image, AttemptTracking attempts, std::string installation_id,
                     ReconciliationSummary reconciliation, WatchSetup watch, RunQueueOptions queue = {},
                     WarmSetup warm = {});

    net::awaitable<Expected<AssembledRun>> run(proto::ValidRunRequest request, std::uint32_t owner_uid,
                                               net::cancellation_slot cancelled, RunObserver* observer) override;

    // The warm boxes (WarmBoxKeeper's keep(), stop(), pause(), resume(), wake()).
    net::awaitable<void> keep_warm() { return m_warm.keep(); }
    net::awaitable<void> stop_warm() { return m_warm.stop(); }
    net::awaitable<void> pause_warm() { return m_warm.pause(); }
    void resume_warm() { m_warm.resume(); }
    void wake_warm() { m_warm.wake(); }

private:
    // Boxes whose removal a run could not confirm (the engine went away) are removed again before
    // the next run, once the engine answers; at most this many are remembered (the oldest
    // dropped), and the sweep removes any box after its expiry in any case.
    static constexpr std::size_t k_max_unconfirmed_boxes = 64;
    void remember_unconfirmed_box(const std::string& container_id);
    // The box of a run or of a warm box that could not be made, when its removal was not confirmed.
    void remember_if_unconfirmed(const BoxRun& box);
    net::awaitable<void> remove_unconfirmed_boxes();

    // What every box needs before it is made: the engine ready (EngineProbe::prepare), the image
    // verified, the boxes of earlier runs removed, the engine's cgroup facts.
    net::awaitable<Expected<VerifiedImage>> check_before_box(const std::string& image_name);
    // Names the box, gives it its run parent and notes the attempt; an Error creates nothing.
    net::awaitable<Expected<void>> open_box(BoxRun& box, std::uint32_t owner_uid, const VerifiedImage& image);

    // The keeper's MakeBox: a warm box of `image_name` for `owner_uid`'s runs, checked, opened and
    // prepared.
    net::awaitable<Expected<std::unique_ptr<BoxRun>>> prepare_warm_box(std::string image_name,
                                                                       std::uint32_t owner_uid);

    net::any_io_executor m_executor;
    engine::BoxEngine& m_engine;
    engine::EngineProbe& m_probe;
    WatchSetup m_watch;
    std::optional<Expected<CgroupFacts>> m_cgroup_facts;
    ImageVerifier m_verify_image;
    AttemptTracking m_attempts;
    std::string m_installation_id;
    ReconciliationSummary m_reconciliation;
    RunQueue m_queue;
    std::vector<std::string> m_unconfirmed_boxes;  // container IDs, oldest first
    WarmBoxKeeper m_warm;
};

}  // namespace pybox::daemon
