// The events of a streamed run (proto/run_events.hpp): how they are written and read back.
#include "proto/run_events.hpp"
#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

using pybox::proto::OutputStream;
using pybox::util::ReadMode;
using pybox::proto::RunEvent;
using pybox::test::lines_of;

// The bytes the output events of `lines` carry, read back strictly.
std::string bytes_of(const std::string& lines)
{
    std::string bytes;
    for (const auto& line : lines_of(lines)) {
        auto event = pybox::proto::parse_run_event(line, ReadMode::strict);
        REQUIRE(event.has_value());
        REQUIRE(event->kind == RunEvent::Kind::output);
        CHECK(event->bytes.size() <= pybox::proto::k_max_event_data_bytes);
        bytes += event->bytes;
    }
    return bytes;
}

}  // namespace

TEST_CASE("Output events carry UTF-8 as text and anything else as base64, each on its own line")
{
    std::string lines;
    pybox::proto::append_output_events(lines, OutputStream::stdout_stream, "h\xc3\xa9llo\n");
    pybox::proto::append_output_events(lines, OutputStream::stderr_stream, std::string("\x00\xff", 2));
    pybox::proto::append_output_events(lines, OutputStream::stderr_stream, "");
    CHECK(lines == "{\"event\":\"stdout\",\"encoding\":\"utf-8\",\"data\":\"h\xc3\xa9llo\\n\"}\n"
                   "{\"event\":\"stderr\",\"encoding\":\"base64\",\"data\":\"AP8=\"}\n");
}

TEST_CASE("Output longer than an event's bound is cut into events between characters, and reads back whole")
{
    std::string text = "ab";  // so that the cuts at the bound would fall inside a character
    while (text.size() < 3 * pybox::proto::k_max_event_data_bytes) text += "a\xe2\x82\xac";  // "a€"
    std::string lines;
    pybox::proto::append_output_events(lines, OutputStream::stdout_stream, text);
    CHECK(lines_of(lines).size() == 4);
    CHECK(lines.find("base64") == std::string::npos);  // no cut fell inside the euro sign
    CHECK(bytes_of(lines) == text);

    std::string binary(2 * pybox::proto::k_max_event_data_bytes + 5, '\xff');
    std::string binary_lines;
    pybox::proto::append_output_events(binary_lines, OutputStream::stderr_stream, binary);
    CHECK(lines_of(binary_lines).size() == 3);
    CHECK(bytes_of(binary_lines) == binary);
}

TEST_CASE("The complete prefix holds back only the start of a character whose rest may come")
{
    using pybox::proto::utf8_complete_prefix;
    CHECK(utf8_complete_prefix("") == 0);
    CHECK(utf8_complete_prefix("abc") == 3);
    CHECK(utf8_complete_prefix("ab\xc3") == 2);
    CHECK(utf8_complete_prefix("ab\xc3\xa9") == 4);
    CHECK(utf8_complete_prefix("a\xe2\x82") == 1);
    CHECK(utf8_complete_prefix("a\xf0\x9f\x98") == 1);
    CHECK(utf8_complete_prefix("a\xf0\x9f\x98\x80") == 5);
    CHECK(utf8_complete_prefix("a\xff") == 2);   // no character begins with 0xFF: nothing to wait for
    CHECK(utf8_complete_prefix("\x80\x80\x80") == 3);
}

TEST_CASE("Every event reads back as written")
{
    const std::string started_line = pybox::proto::started_event("abc");
    CHECK(started_line == "{\"event\":\"started\",\"run_id\":\"abc\"}\n");
    auto started = pybox::proto::parse_run_event(started_line.substr(0, started_line.size() - 1), ReadMode::strict);
    REQUIRE(started.has_value());
    CHECK(started->kind == RunEvent::Kind::started);
    CHECK(started->run_id == "abc");

    const std::string answer = R"({"run_id":"abc","n":[1,2.5]})";
    const std::string receipt_line = pybox::proto::receipt_event(answer, std::nullopt);
    CHECK(receipt_line == "{\"event\":\"receipt\",\"answer\":" + answer + "}\n");
    auto receipt = pybox::proto::parse_run_event(receipt_line.substr(0, receipt_line.size() - 1), ReadMode::strict);
    REQUIRE(receipt.has_value());
    CHECK(receipt->kind == RunEvent::Kind::receipt);
    CHECK(receipt->answer.at("run_id") == "abc");
    CHECK_FALSE(receipt->receipt_not_kept.has_value());

    const std::string error_line = pybox::proto::error_event({"busy", "full", true});
    CHECK(error_line == R"({"event":"error","error":{"code":"busy","message":"full","retryable":true}})" "\n");
    auto error = pybox::proto::parse_run_event(error_line.substr(0, error_line.size() - 1), ReadMode::strict);
    REQUIRE(error.has_value());
    CHECK(error->kind == RunEvent::Kind::error);
    CHECK(error->error == pybox::proto::ErrorAnswer{"busy", "full", true});
}

TEST_CASE("A receipt event says why its receipt was not kept, and reads back with it")
{
    const std::string answer = R"({"run_id":"abc"})";
    const std::string line = pybox::proto::receipt_event(answer, "pyboxd signed the receipt but could not keep it: \"full\".");
    CHECK(line == "{\"event\":\"receipt\",\"answer\":" + answer +
                      R"(,"receipt_not_kept":"pyboxd signed the receipt but could not keep it: \"full\"."})" "\n");
    auto receipt = pybox::proto::parse_run_event(line.substr(0, line.size() - 1), ReadMode::strict);
    REQUIRE(receipt.has_value());
    CHECK(receipt->answer.at("run_id") == "abc");
    CHECK(receipt->receipt_not_kept == "pyboxd signed the receipt but could not keep it: \"full\".");
    CHECK_FALSE(pybox::proto::parse_run_event(R"({"event":"receipt","answer":{},"receipt_not_kept":1})", ReadMode::tolerant).has_value());
}

TEST_CASE("The reader refuses what this version does not write; tolerantly it skips unknown events and keys")
{
    const auto refused = [](std::string_view line) {
        auto event = pybox::proto::parse_run_event(line, ReadMode::tolerant);
        return !event && event.error().code == "invalid_answer";
    };
    CHECK(refused("not json"));
    CHECK(refused("[1]"));
    CHECK(refused(R"({"event":"stdout","encoding":"latin-1","data":"x"})"));
    CHECK(refused(R"({"event":"stdout","encoding":"base64","data":"@@@@"})"));
    CHECK(refused(R"({"event":"stdout","encoding":"utf-8"})"));
    CHECK(refused(R"({"event":"started","run_id":"a","run_id":"b"})"));
    CHECK(refused(R"({"event":"stdout","encoding":"utf-8","data":")" +
                  std::string(pybox::proto::k_max_event_data_bytes + 1, 'x') + "\"}"));

    const std::string later = R"({"event":"heartbeat","at":1})";
    CHECK_FALSE(pybox::proto::parse_run_event(later, ReadMode::strict).has_value());
    auto skipped = pybox::proto::parse_run_event(later, ReadMode::tolerant);
    REQUIRE(skipped.has_value());
    CHECK(skipped->kind == RunEvent::Kind::unknown);

    const std::string extra = R"({"event":"started","run_id":"a","engine":"local"})";
    CHECK_FALSE(pybox::proto::parse_run_event(extra, ReadMode::strict).has_value());
    CHECK(pybox::proto::parse_run_event(extra, ReadMode::tolerant).has_value());
}
