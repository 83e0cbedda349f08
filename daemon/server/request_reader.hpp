// RequestReader: reads one HTTP/1.1 request of the socket API out of bytes as they arrive,
// strictly and within fixed bounds (docs/api.md, "Framing and limits"). It does no I/O, so the
// server (http_server.cpp) and the fuzz target (tests/fuzz/http_request_fuzz.cpp) drive the same
// code over a socket and over bytes in memory.
//
// Contract:
// - One reader per request; it owns Beast's parser and the message the parser fills. Not
//   copyable nor movable (the parser holds a callback into it). Single-threaded.
// - put(bytes) parses what it can and returns how many bytes it took. The caller drops those and
//   offers the rest again, with whatever arrived since appended, until done() or refusal().
//   Bytes after a whole request (the next, pipelined one) are never taken.
// - Bounds. The header may hold at most limits::k_max_request_header_bytes (else 431
//   header_too_large). The body may hold at most limits::k_max_run_request_body_bytes for
//   POST /v1/runs and limits::k_max_request_body_bytes for any other request (else 413
//   body_too_large; refused from Content-Length before any of the body is read). In a chunked
//   body, a chunk-size line, and the last chunk with its trailer, are held until they are whole:
//   each must fit in limits::k_max_request_header_bytes too (else 431), however the bytes are
//   split. So a caller that offers again what put() did not take, plus at most one read of `n`
//   bytes, never holds more than that limit plus n, whatever the client sends. A request
//   accepted at two splits of its bytes is the same request; a malformed one may be refused at
//   one split and not at another (Beast judges by the bytes at hand), never past the bounds.
// - Strictness. A chunk extension is refused (400 invalid_http); so is a Content-Length given
//   more than once or as a list, and a Transfer-Encoding other than one `chunked` (a coding
//   other than chunked: 501 transfer_coding_unsupported; chunked twice, or none: 400
//   invalid_http). A trailer within the bound is read and dropped: its fields never reach the
//   message. Malformed HTTP is 400 invalid_http.
// - Failure is a value: refusal() holds the answer to give (the connection is then to be
//   closed); after it put() takes nothing. Exceptions only for bugs and memory exhaustion.
#pragma once

#include "common/error.hpp"

#include <boost/beast/core/error.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace pybox::daemon {

class RequestReader {
public:
    using Message = boost::beast::http::request<boost::beast::http::string_body>;

    RequestReader();
    RequestReader(const RequestReader&) = delete;
    RequestReader& operator=(const RequestReader&) = delete;

    // Parses what it can of `bytes` (what was not taken before, then what arrived since);
    // returns how many of them it took. Takes nothing once done() or refused.
    std::size_t put(std::string_view bytes);

    // The whole header has been read and accepted.
    bool header_done() const { return m_header_read; }
    // The whole request has been read and accepted: message() is complete.
    bool done() const { return !m_refusal && m_parser.is_done(); }
    // The answer to give when the request was refused; the connection is then to be closed.
    const std::optional<Error>& refusal() const { return m_refusal; }
    // Whether the client waits for `100 Continue` before it sends the body: the header, accepted,
    // asked for it and the body is still to come.
    bool expects_continue() const;

    // The request: its header once header_done(), all of it once done().
    Message& message() { return m_parser.get(); }

private:
    // Checks the header just read and sets the body's limit; a refusal when it must be refused.
    std::optional<Error> accept_header();

    boost::beast::http::request_parser<boost::beast::http::string_body> m_parser;
    std::function<void(std::uint64_t, boost::beast::string_view, boost::beast::error_code&)> m_on_chunk_header;
    bool m_header_read = false;
    std::size_t m_header_fields = 0;  // how many fields the header had (the trailer's follow them)
    std::optional<Error> m_refusal;
};

}  // namespace pybox::daemon
