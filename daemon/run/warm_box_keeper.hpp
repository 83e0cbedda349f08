// WarmBoxKeeper: the warm boxes of one run service (box_run.hpp; docs/how-it-works.md, "Warm
// boxes: steps 4-8 before the request"). With `count` above 0, keep() keeps that many boxes of
// the wanted image (the one most recently run) created, verified and started ahead of the
// requests, one at a time and never while a run holds its turn or waits for one. take() hands a
// run a box it can use (the same image, verified again right before; no files; the run's user;
// the box still running and ending before its expiry label), else waits for the one being made
// for its image, else answers null (the run goes cold). Each box is handed out once. A run that
// found a box waiting for less than k_warm_series_gap, or none, is taken for one of a series
// (in_series()): its service then wakes the keeper, so the next box is begun at once, beside the
// run, instead of after it. A box is replaced k_warm_box_renewed_before_expiry_s before its
// expiry label, and a box of an image no longer wanted goes; stop() removes them all (the daemon
// stopping), pause() removes them and makes none until resume(). A daemon that dies leaves them
// to the sweep: they carry the labels and attempt notes of every box.
//
// A box that could not be made is tried again 1 s later, doubling to 30 s (k_warm_retry_first,
// k_warm_retry_longest), or when wake() is called; each new reason is logged to stderr once.
//
// Ownership: owns the boxes it holds and hands each out with its ownership; borrows the run
// queue, which must outlive it. The boxes it gives up are removed in coroutines of their own
// (discard_later()). Single-threaded, on the daemon's executor.
#pragma once

#include "common/error.hpp"
#include "daemon/run/box_run.hpp"
#include "daemon/run/run_queue.hpp"
#include "proto/run_request.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

namespace pybox::daemon {

// How many warm boxes to keep (config.json warm_boxes; 0 = every run cold).
struct WarmSetup {
    int count = 0;
    std::uint32_t owner_uid = 0;  // whose runs may take them: the daemon's user (owner mode only)
};

class WarmBoxKeeper {
public:
    // Makes a prepared warm box (BoxRun::prepare() done) of `image`, labelled with the user whose
    // runs may take it, or says why it could not.
    using MakeBox = std::function<net::awaitable<Expected<std::unique_ptr<BoxRun>>>(std::string image,
                                                                                   std::uint32_t owner_uid)>;

    // Keeps none when `box_expiry_s` leaves a box too little time to wait and still take the
    // longest run before its expiry.
    WarmBoxKeeper(net::any_io_executor executor, WarmSetup setup, std::int64_t box_expiry_s, const RunQueue& queue,
                  MakeBox make);
    WarmBoxKeeper(const WarmBoxKeeper&) = delete;
    WarmBoxKeeper& operator=(const WarmBoxKeeper&) = delete;

    // Keeps the warm boxes until stop(); returns at once when there are to be none.
    net::awaitable<void> keep();
    // Ends keep() and removes the boxes held (awaiting their removal).
    net::awaitable<void> stop();
    // Removes the boxes held (awaiting their removal, and the end of one being made) and makes
    // none until resume(); take() meanwhile answers null. Pauses nest.
    net::awaitable<void> pause();
    void resume();
    // Makes the missing boxes now, not at keep()'s next retry or renewal.
    void wake() { m_wakeup.cancel(); }

    // A run of `image` that moves no files came: the boxes kept are of that image from now.
    void want(std::string image) { m_image = std::move(image); }
    // A ready box for `request` of the user `owner_uid`, made of `image` as it is now, or null.
    net::awaitable<std::unique_ptr<BoxRun>> take(const proto::RunRequest& request, std::uint32_t owner_uid,
                                                 const VerifiedImage& image);
    // The latest take() was one of a series.
    bool in_series() const { return m_series; }
    // Removes a box nobody will use, in a coroutine of its own.
    void discard_later(std::unique_ptr<BoxRun> box);

private:
    net::awaitable<void> remove_all();

    net::any_io_executor m_executor;
    WarmSetup m_setup;
    const RunQueue& m_queue;
    MakeBox m_make;
    std::string m_image;                     // the image boxes are made of: the last one run
    std::deque<std::unique_ptr<BoxRun>> m_ready;  // oldest first
    bool m_preparing = false;
    bool m_series = false;
    bool m_stopping = false;
    int m_paused = 0;
    net::steady_timer m_wakeup;   // keep()'s wait: a run ended, a box is due for renewal
    net::steady_timer m_changed;  // take()s waiting for the box being made
};

}  // namespace pybox::daemon
