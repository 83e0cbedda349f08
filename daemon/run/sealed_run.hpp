// SealedRunService: the run lifecycle of DESIGN.md "One sealed run", one run at a time.
//
// Owns nothing it is given: the EngineClient, the image check and the reconciliation summary
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
// The kernel watcher (run_watch.hpp) observes each box as `watch` says; without a CgroupHost
// the watcher is switched off and resources are UNKNOWN. The engine's cgroup version and driver are
// read from GET /info at the first run and kept; a failed read is retried at the next run.
#pragma once

#include "common/limits.hpp"
#include "daemon/engine/engine_client.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/run/attempts.hpp"
#include "daemon/run/box_spec.hpp"
#include "daemon/run/run_cgroup.hpp"
#include "daemon/run/run_queue.hpp"
#include "daemon/run/run_watch.hpp"
#include "daemon/server/services.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pybox::daemon {

struct VerifiedImage {
    std::string image_id;
    std::string recipe_sha256;
};

// Checks an image name against the image registry and the engine right before a run.
using ImageVerifier = std::function<net::awaitable<Expected<VerifiedImage>>(std::string name)>;
// The latest summary of the sweep of leftover boxes, for the receipt's cleanup section.
using ReconciliationSummary = std::function<json::value()>;

// How runs record their attempts: the notes, this daemon's runs in progress (which the sweep
// leaves alone; may be null) and how long a box is kept before the sweep may remove it.
struct AttemptTracking {
    AttemptLog log;
    RunsInProgress* in_progress = nullptr;
    std::int64_t box_expiry_s = limits::k_box_expiry_s;
    // The engine these runs go to: its id in the pool (engine_entry.hpp), written in each note
    // (whose sweep is that engine's) and, with the dialer's address, in each receipt's `engine`.
    std::string engine_id{engine::k_local_engine_id};
};

class SealedRunService final : public RunService {
public:
    SealedRunService(net::any_io_executor executor, engine::EngineClient& engine, BoxRuntime runtime,
                     ImageVerifier verify_image, AttemptTracking attempts, std::string installation_id,
                     ReconciliationSummary reconciliation, WatchSetup watch, RunQueueOptions queue = {});

    net::awaitable<Expected<proto::RunAnswer>> run(proto::RunRequest request,
                                                   net::cancellation_slot cancelled) override;

private:
    // Boxes whose removal a run could not confirm (the engine went away) are removed again before
    // the next run, once the engine answers; at most this many are remembered (the oldest
    // dropped), and the sweep removes any box after its expiry in any case.
    static constexpr std::size_t k_max_unconfirmed_boxes = 64;
    void remember_unconfirmed_box(const std::string& container_id);
    net::awaitable<void> remove_unconfirmed_boxes();

    net::any_io_executor m_executor;
    engine::EngineClient& m_engine;
    WatchSetup m_watch;
    std::optional<Expected<CgroupFacts>> m_cgroup_facts;
    BoxRuntime m_runtime;
    ImageVerifier m_verify_image;
    AttemptTracking m_attempts;
    std::string m_installation_id;
    ReconciliationSummary m_reconciliation;
    RunQueue m_queue;
    std::vector<std::string> m_unconfirmed_boxes;  // container IDs, oldest first
};

}  // namespace pybox::daemon
