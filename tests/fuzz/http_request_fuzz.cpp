// Fuzzes RequestReader (daemon/server/request_reader.hpp), the daemon's reading of a request, as
// the server drives it: the input's first byte gives the size of each read (1 to 256 bytes), the
// rest are the bytes a client sends, chunked framing, extensions and trailers among them. The
// reader must never crash or throw, never make its caller hold more than the header limit plus
// one read, read the same request when the bytes are offered all at once and accepted both ways,
// and accept only what it promises to: at most one Content-Length, no transfer coding but
// chunked, a body within its target's limit.
#include "daemon/server/request_reader.hpp"

#include "common/limits.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/field.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using pybox::daemon::RequestReader;
namespace http = boost::beast::http;

using pybox::fuzz::check;

struct Outcome {
    std::size_t taken = 0;  // counted when done: where the next request begins
    bool done = false;
    std::string refusal;
    std::string body;

    bool operator==(const Outcome&) const = default;
};

Outcome outcome_of(RequestReader& reader, std::size_t taken)
{
    return {reader.done() ? taken : 0, reader.done(), reader.refusal() ? reader.refusal()->code : std::string(),
            reader.done() ? reader.message().body() : std::string()};
}

// What a done reader promises about the request it accepted.
void check_accepted(RequestReader& reader)
{
    auto& message = reader.message();
    check(message.count(http::field::content_length) <= 1);
    check(message.count(http::field::transfer_encoding) <= 1);
    if (message.count(http::field::transfer_encoding) == 1)
        check(boost::beast::iequals(message[http::field::transfer_encoding], "chunked"));
    const std::size_t limit = message.target() == "/v1/runs" ? pybox::limits::k_max_run_request_body_bytes
                                                             : pybox::limits::k_max_request_body_bytes;
    check(message.body().size() <= limit);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1) {
        return 0;
    }
    const std::size_t piece = std::size_t{data[0]} + 1;
    const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);

    // As the server reads: a piece more at a time, after what the reader left.
    RequestReader split;
    std::string held;
    std::size_t next = 0;
    std::size_t split_taken = 0;
    while (!split.done() && !split.refusal() && next < input.size()) {
        const auto more = std::min(piece, input.size() - next);
        held.append(input.substr(next, more));
        next += more;
        check(held.size() <= pybox::limits::k_max_request_header_bytes + piece);
        const auto taken = split.put(held);
        check(taken <= held.size());
        split_taken += taken;
        held.erase(0, taken);
    }

    // All at once, as when a client pipelined it behind a request being answered.
    RequestReader whole;
    const std::size_t whole_taken = whole.put(input);
    check(whole_taken <= input.size());
    check(whole.put(input.substr(whole_taken)) == 0);

    // Beast judges a malformed request by the bytes it has at hand: it may refuse one sooner,
    // for another fault, or (a header it scanned a byte at a time) not at all where a bigger
    // read accepted it. What both readers accept must be the same request.
    const auto split_outcome = outcome_of(split, split_taken);
    if (split.done() && whole.done()) check(split_outcome == outcome_of(whole, whole_taken));
    for (auto* reader : {&split, &whole}) {
        if (!reader->done()) continue;
        check(!reader->refusal());
        check_accepted(*reader);
    }
    return 0;
}
