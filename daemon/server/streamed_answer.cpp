#include "daemon/server/streamed_answer.hpp"

#include "common/api_error_codes.hpp"
#include "proto/run_events.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <utility>

namespace pybox::daemon {

namespace {

// The error of a non-200 answer, which error_response() wrote ({"error": {...}}).
proto::ErrorAnswer error_of(const ApiResponse& response)
{
    boost::system::error_code ec;
    const auto document = boost::json::parse(response.body, ec);
    auto error = ec ? Expected<proto::ErrorAnswer>(make_error(api_error::k_internal_error, "unreadable"))
                    : proto::error_answer_from_json(document, util::ReadMode::strict);
    if (error) return *error;
    return {api_error::k_internal_error, "The daemon failed while answering the run.", false};
}

}  // namespace

StreamedAnswer::StreamedAnswer(net::any_io_executor executor)
    : m_wake(std::move(executor), net::steady_timer::time_point::max())
{
}

void StreamedAnswer::started(const std::string& run_id) { queue(proto::started_event(run_id)); }

void StreamedAnswer::output(proto::OutputStream stream, std::string_view bytes)
{
    std::string& held = stream == proto::OutputStream::stdout_stream ? m_held_stdout : m_held_stderr;
    held += bytes;
    const std::size_t complete = proto::utf8_complete_prefix(held);
    std::string lines;
    proto::append_output_events(lines, stream, std::string_view(held).substr(0, complete));
    held.erase(0, complete);
    if (!lines.empty()) queue(std::move(lines));
}

void StreamedAnswer::flush_held_back()
{
    std::string lines;
    proto::append_output_events(lines, proto::OutputStream::stdout_stream, std::exchange(m_held_stdout, {}));
    proto::append_output_events(lines, proto::OutputStream::stderr_stream, std::exchange(m_held_stderr, {}));
    if (!lines.empty()) queue(std::move(lines));
}

void StreamedAnswer::finish(ApiResponse response)
{
    if (m_finished) return;
    if (!m_began) {
        m_plain = std::move(response);
    } else {
        flush_held_back();
        queue(response.status == 200 ? proto::receipt_event(response.body, response.receipt_not_kept)
                                     : proto::error_event(error_of(response)));
    }
    m_finished = true;
    m_wake.cancel();
}

void StreamedAnswer::queue(std::string lines)
{
    m_began = true;
    m_lines += lines;
    m_wake.cancel();
}

net::awaitable<void> StreamedAnswer::wait()
{
    if (!m_lines.empty() || m_finished) co_return;
    m_wake.expires_at(net::steady_timer::time_point::max());
    // Woken by cancel(): the error code says only that.
    co_await m_wake.async_wait(net::as_tuple(net::use_awaitable));
}

std::string StreamedAnswer::take() { return std::exchange(m_lines, {}); }

}  // namespace pybox::daemon
