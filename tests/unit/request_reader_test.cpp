// RequestReader over bytes in memory: what it reads, what it refuses, and how much it makes its
// caller hold, offered as a socket would offer them (in reads of at most 4 KiB).
#include "daemon/server/request_reader.hpp"

#include "common/limits.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

namespace {

using pybox::daemon::RequestReader;
using namespace std::string_literals;

constexpr std::size_t k_read = 4096;

struct Fed {
    std::size_t taken = 0;     // bytes the reader took
    std::size_t most_held = 0; // the most bytes the caller held at once, taken or not
};

// Offers `bytes` to `reader` as the server does: `piece` bytes more at a time, appended to what
// the reader left, until it is done, refuses, or the bytes run out.
Fed feed(RequestReader& reader, std::string_view bytes, std::size_t piece = k_read)
{
    Fed fed;
    std::string held;
    std::size_t next = 0;
    while (!reader.done() && !reader.refusal() && next < bytes.size()) {
        const auto more = std::min(piece, bytes.size() - next);
        held.append(bytes.substr(next, more));
        next += more;
        fed.most_held = std::max(fed.most_held, held.size());
        const auto taken = reader.put(held);
        fed.taken += taken;
        held.erase(0, taken);
    }
    return fed;
}

std::string chunked_runs(const std::string& chunks)
{
    return "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks;
}

std::string refusal_code(const RequestReader& reader) { return reader.refusal() ? reader.refusal()->code : "none"; }

}  // namespace

TEST_CASE("A request is read whole and the bytes of the next one are left to the caller")
{
    const std::string first = "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nContent-Length: 2\r\n\r\n{}";
    const std::string second = "GET /v1/ping HTTP/1.1\r\nHost: pybox\r\n\r\n";
    RequestReader reader;
    CHECK(reader.put(first + second) == first.size());
    REQUIRE(reader.done());
    CHECK(reader.message().body() == "{}");
    CHECK(reader.message().target() == "/v1/runs");
}

TEST_CASE("A request offered a byte at a time is read as it is in one piece")
{
    RequestReader reader;
    const auto request = chunked_runs("2\r\n{}\r\n1\r\n \r\n0\r\n\r\n");
    const auto fed = feed(reader, request, 1);
    REQUIRE(reader.done());
    CHECK(reader.message().body() == "{} ");
    CHECK(fed.taken == request.size());
}

TEST_CASE("A chunked body of only its last chunk, offered a byte at a time, is read without tripping Beast's assertion")
{
    // Beast asserts that a last chunk it waited on comes back with at least 5 bytes; found by
    // http_request_fuzz.
    for (const auto& chunks : {std::string("0\r\n\r\n"), std::string("0\r\nX-T: 1\r\n\r\n")}) {
        RequestReader reader;
        const auto request = chunked_runs(chunks);
        const auto fed = feed(reader, request, 1);
        REQUIRE(reader.done());
        CHECK(reader.message().body().empty());
        CHECK(fed.taken == request.size());
    }
}

TEST_CASE("A chunked body is read and its trailer's fields are dropped")
{
    RequestReader reader;
    feed(reader, chunked_runs("2\r\n{}\r\n0\r\nConnection: close\r\nX-T: 1\r\n\r\n"));
    REQUIRE(reader.done());
    CHECK(reader.message().body() == "{}");
    CHECK(reader.message().count("X-T") == 0);
    CHECK(reader.message().keep_alive());
}

// docs/hostile.md case 33 (issue 28 item 7: Beast threw std::length_error on this trailer)
TEST_CASE("A trailer field over 65,535 bytes is refused with 431 once 16 KiB of it is held, without an exception")
{
    RequestReader reader;
    const auto fed = feed(reader, chunked_runs("2\r\n{}\r\n0\r\nX-T: " + std::string(65'540, 't') + "\r\n\r\n"));
    CHECK(refusal_code(reader) == "header_too_large");
    CHECK(fed.most_held <= pybox::limits::k_max_request_header_bytes + k_read);
}

TEST_CASE("A trailer over 16 KiB is refused also when the whole request is offered at once")
{
    // As when it was pipelined behind a request the server was still answering.
    RequestReader reader;
    reader.put(chunked_runs("2\r\n{}\r\n0\r\nX-T: " + std::string(65'540, 't') + "\r\n\r\n"));
    CHECK(refusal_code(reader) == "header_too_large");
}

TEST_CASE("50,000 trailer fields are refused with 431 once 16 KiB of them is held")
{
    std::string trailer;
    for (int i = 0; i < 50'000; ++i) trailer += "X-" + std::to_string(i) + ": v\r\n";
    RequestReader reader;
    const auto fed = feed(reader, chunked_runs("2\r\n{}\r\n0\r\n" + trailer + "\r\n"));
    CHECK(refusal_code(reader) == "header_too_large");
    CHECK(fed.most_held <= pybox::limits::k_max_request_header_bytes + k_read);
}

TEST_CASE("A chunk extension of 1 MB is refused with 431 once 16 KiB of it is held")
{
    RequestReader reader;
    const auto fed = feed(reader, chunked_runs("2;x=" + std::string(1 << 20, 'e') + "\r\n{}\r\n0\r\n\r\n"));
    CHECK(refusal_code(reader) == "header_too_large");
    CHECK(fed.most_held <= pybox::limits::k_max_request_header_bytes + k_read);
}

TEST_CASE("A chunk extension is refused with 400, on the last chunk too")
{
    for (const auto& chunks : {"2;a=b\r\n{}\r\n0\r\n\r\n"s, "2\r\n{}\r\n0;a\r\n\r\n"s}) {
        INFO(chunks);
        RequestReader reader;
        feed(reader, chunked_runs(chunks));
        CHECK(refusal_code(reader) == "invalid_http");
    }
}

TEST_CASE("A chunked body larger than the target's limit is refused with 413")
{
    RequestReader reader;
    const auto size = pybox::limits::k_max_request_body_bytes + 1;
    std::ostringstream chunk;
    chunk << std::hex << size;
    feed(reader, "POST /v1/setup HTTP/1.1\r\nHost: pybox\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk.str() + "\r\n");
    CHECK(refusal_code(reader) == "body_too_large");
}

// docs/hostile.md case 32 (issue 28 item 9)
TEST_CASE("A transfer coding other than chunked is refused with 501, chunked after it or not")
{
    const std::pair<std::string, std::string> cases[] = {
        {"gzip, chunked", "gzip"}, {"gzip", "gzip"}, {"chunked, gzip", "gzip"}, {"identity", "identity"}};
    for (const auto& [codings, named] : cases) {
        INFO(codings);
        RequestReader reader;
        feed(reader, "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nTransfer-Encoding: " + codings + "\r\n\r\n2\r\n{}\r\n0\r\n\r\n");
        REQUIRE(refusal_code(reader) == "transfer_coding_unsupported");
        CHECK(reader.refusal()->message.find('"' + named + '"') != std::string::npos);
    }
}

TEST_CASE("chunked named twice, or an empty coding, is refused with 400")
{
    for (const auto& codings : {"chunked, chunked"s, "chunked\r\nTransfer-Encoding: chunked"s, "chunked,"s, ""s}) {
        INFO(codings);
        RequestReader reader;
        feed(reader, "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nTransfer-Encoding: " + codings + "\r\n\r\n0\r\n\r\n");
        CHECK(refusal_code(reader) == "invalid_http");
    }
}

// docs/hostile.md case 32 (issue 28 item 9)
TEST_CASE("A Content-Length given as a list or twice is refused with 400, even when the numbers agree")
{
    for (const auto& lengths : {"2, 2"s, "2\r\nContent-Length: 2"s, "2,2"s}) {
        INFO(lengths);
        RequestReader reader;
        feed(reader, "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nContent-Length: " + lengths + "\r\n\r\n{}");
        CHECK(refusal_code(reader) == "invalid_http");
    }
}

TEST_CASE("A body announced larger than the target's limit is refused before any of it is taken")
{
    const std::string header = "POST /v1/setup HTTP/1.1\r\nHost: pybox\r\nContent-Length: " +
                               std::to_string(pybox::limits::k_max_request_body_bytes + 1) + "\r\n\r\n";
    RequestReader reader;
    CHECK(reader.put(header + "{}") == header.size());
    CHECK(refusal_code(reader) == "body_too_large");
    CHECK(reader.put("{}") == 0);
}

TEST_CASE("A client waits for 100 Continue only while its announced body is still to come")
{
    const std::string header = "POST /v1/setup HTTP/1.1\r\nHost: pybox\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
    RequestReader waiting;
    waiting.put(header);
    CHECK(waiting.expects_continue());
    RequestReader sent_anyway;
    sent_anyway.put(header + "{}");
    CHECK(sent_anyway.done());
    CHECK_FALSE(sent_anyway.expects_continue());
}
