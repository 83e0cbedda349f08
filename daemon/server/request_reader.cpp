#include "daemon/server/request_reader.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"
#include "util/text.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace pybox::daemon {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

const std::string k_limit_text = std::to_string(limits::k_max_request_header_bytes);
// A chunked body is offered to Beast only while at least this many of its bytes are at hand:
// the shortest end a chunked body can have ("0\r\n\r\n"), so a valid request never waits on
// it. Beast asserts it when it takes up again a last chunk it had to wait on (n >= 5 in
// parse_chunk_header): a body of only the last chunk, sent a byte at a time, failed that
// assertion, which ends a build with assertions on (found by http_request_fuzz).
constexpr std::size_t k_chunked_min_offer = 5;

Error header_too_large() { return make_error(api_error::k_header_too_large, "The request header is larger than " + k_limit_text + " bytes."); }

Error framing_too_large()
{
    return make_error(api_error::k_header_too_large,
                      "A chunk-size line, or the last chunk with its trailer, is larger than " + k_limit_text + " bytes.");
}

Error body_too_large()
{
    return make_error(api_error::k_body_too_large, "The request body is larger than " +
                                                       std::to_string(limits::k_max_request_body_bytes) + " bytes (" +
                                                       std::to_string(limits::k_max_run_request_body_bytes) +
                                                       " for POST /v1/runs).");
}

Error invalid_http(std::string sentence) { return make_error(api_error::k_invalid_http, std::move(sentence)); }

// The codings of every Transfer-Encoding field, in order, each without its surrounding spaces.
std::vector<std::string_view> transfer_codings(const RequestReader::Message& message)
{
    std::vector<std::string_view> codings;
    const auto [first, last] = message.equal_range(http::field::transfer_encoding);
    for (auto field = first; field != last; ++field) {
        std::string_view rest = field->value();
        for (;;) {
            const auto comma = rest.find(',');
            std::string_view coding = rest.substr(0, comma);
            const auto begin = coding.find_first_not_of(" \t");
            coding = begin == std::string_view::npos ? std::string_view{}
                                                     : coding.substr(begin, coding.find_last_not_of(" \t") - begin + 1);
            codings.push_back(coding);
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
    }
    return codings;
}

// The answer to a parse error.
Error refusal_for(const beast::error_code& ec)
{
    if (ec == http::error::body_limit) return body_too_large();
    if (ec == http::error::header_limit) return header_too_large();
    if (ec == http::error::bad_chunk_extension) return invalid_http("A chunk has an extension; pyboxd accepts none.");
    return invalid_http("The request is not valid HTTP/1.1: " + ec.message() + ".");
}

}  // namespace

RequestReader::RequestReader()
    : m_on_chunk_header([](std::uint64_t, beast::string_view extensions, beast::error_code& ec) {
          if (!extensions.empty()) ec = http::error::bad_chunk_extension;
      })
{
    m_parser.header_limit(static_cast<std::uint32_t>(limits::k_max_request_header_bytes));
    m_parser.body_limit(limits::k_max_run_request_body_bytes);  // the largest; accept_header() sets the request's own
    m_parser.on_chunk_header(m_on_chunk_header);
}

std::size_t RequestReader::put(std::string_view bytes)
{
    // Beast sees at most a window of the header limit at once. It holds a header, a chunk-size
    // line, or the last chunk with its trailer, until it is whole: one that does not end within
    // a whole window is refused, however the bytes arrive (several pipelined requests at once
    // too), so no field is ever longer than the window.
    std::size_t taken = 0;
    while (!m_refusal && !m_parser.is_done() && taken < bytes.size()) {
        const auto window = bytes.substr(taken, limits::k_max_request_header_bytes);
        if (m_header_read && m_parser.chunked() && window.size() < k_chunked_min_offer) break;
        beast::error_code ec;
        const std::size_t used = m_parser.put(net::buffer(window.data(), window.size()), ec);
        taken += used;
        if (ec && ec != http::error::need_more) {
            m_refusal = refusal_for(ec);
        } else if (!m_header_read && m_parser.is_header_done()) {
            // Not eager until here: Beast stops after the header, which is checked before any
            // of the body is taken.
            m_header_read = true;
            m_header_fields = static_cast<std::size_t>(std::distance(message().begin(), message().end()));
            m_refusal = accept_header();
            m_parser.eager(true);
        } else if (used == 0) {
            if (window.size() == limits::k_max_request_header_bytes) m_refusal = framing_too_large();
            break;
        }
    }
    if (!m_refusal && m_parser.is_done() && m_parser.chunked()) {
        // The trailer's fields were added after the header's: drop them.
        auto& fields = message().base();
        for (auto field = std::next(fields.begin(), static_cast<std::ptrdiff_t>(m_header_fields)); field != fields.end();)
            field = fields.erase(field);
    }
    return taken;
}

bool RequestReader::expects_continue() const
{
    return header_done() && !m_refusal && !m_parser.is_done() &&
           beast::iequals(m_parser.get()[http::field::expect], "100-continue");
}

std::optional<Error> RequestReader::accept_header()
{
    const auto& header = message();
    if (header.count(http::field::content_length) > 1 ||
        header[http::field::content_length].find(',') != beast::string_view::npos)
        return invalid_http("Content-Length must be given once, as one number.");
    const auto codings = transfer_codings(header);
    for (const auto coding : codings) {
        if (coding.empty()) return invalid_http("Transfer-Encoding has an empty coding.");
        if (!beast::iequals(coding, "chunked"))
            return make_error(api_error::k_transfer_coding_unsupported,
                              "The transfer coding \"" + util::printable_excerpt(coding) +
                                  "\" is not implemented; a request body is sent as it is or chunked, nothing else.");
    }
    if (codings.size() > 1) return invalid_http("Transfer-Encoding must name chunked once.");
    const std::size_t limit = header.target() == "/v1/runs" ? limits::k_max_run_request_body_bytes
                                                            : limits::k_max_request_body_bytes;
    if (m_parser.content_length() && *m_parser.content_length() > limit) return body_too_large();
    m_parser.body_limit(limit);
    return std::nullopt;
}

}  // namespace pybox::daemon
