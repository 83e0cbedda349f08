// StreamedAnswer: the events of one streamed run (POST /v1/runs with Accept:
// application/x-ndjson, proto/run_events.hpp) between the run, which tells it what happens
// (RunObserver), and the connection, which writes them (http_server.cpp). The run never waits
// for the client: events queue here, and the queue is bounded because the run tells only the
// bytes its receipt keeps (at most the request's output limit per stream, a few hundred bytes of
// framing per 16 KiB event), then one receipt event. A UTF-8 character cut by the engine's
// framing is held back (at most 3 bytes per stream) until its rest arrives or the run ends, so
// text stays text.
//
// A run that ends before any event (refused, queue full, image missing, nothing started) has no
// stream: plain_response() then holds its ordinary answer, status and Retry-After included.
// Ownership: owns its queue; lives on the daemon's executor, as the run and the writer do.
#pragma once

#include "daemon/server/api_router.hpp"
#include "daemon/server/services.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace pybox::daemon {

class StreamedAnswer final : public RunObserver {
public:
    explicit StreamedAnswer(net::any_io_executor executor);

    void started(const std::string& run_id) override;
    void output(proto::OutputStream stream, std::string_view bytes) override;
    // The run's answer: its receipt event, or its error event; before any event, the plain answer.
    void finish(ApiResponse response);

    // Until there are lines to take, or the run ended.
    net::awaitable<void> wait();
    // The lines queued so far (each ends in "\n"), emptying the queue.
    std::string take();
    bool finished() const { return m_finished; }
    // Set when the run ended before its first event: answer it unstreamed.
    const std::optional<ApiResponse>& plain_response() const { return m_plain; }

private:
    void queue(std::string lines);
    void flush_held_back();

    net::steady_timer m_wake;
    std::string m_lines;
    std::string m_held_stdout;  // the start of a UTF-8 character whose rest has not come
    std::string m_held_stderr;
    bool m_began = false;
    bool m_finished = false;
    std::optional<ApiResponse> m_plain;
};

}  // namespace pybox::daemon
