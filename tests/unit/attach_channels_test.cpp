#include "daemon/kube/attach_channels.hpp"
#include "daemon/kube/kube_limits.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace pybox::kube;

namespace {

std::string channel_message(unsigned char channel, const std::string& bytes) { return std::string(1, static_cast<char>(channel)) + bytes; }

std::string channel_refusal(const std::string& bytes)
{
    auto decoded = decode_attach_message(bytes);
    REQUIRE_FALSE(decoded.has_value());
    CHECK(decoded.error().code == "engine_protocol");
    return decoded.error().message;
}

}  // namespace

TEST_CASE("The client offers v5 first, then v4, and knows which one the server agreed to")
{
    CHECK(offered_attach_protocols() == "v5.channel.k8s.io, v4.channel.k8s.io");
    CHECK(agreed_attach_protocol("v4.channel.k8s.io") == AttachProtocol::v4);
    CHECK(agreed_attach_protocol("v5.channel.k8s.io") == AttachProtocol::v5);
    CHECK_FALSE(agreed_attach_protocol("").has_value());
    CHECK_FALSE(agreed_attach_protocol("channel.k8s.io").has_value());
    CHECK_FALSE(agreed_attach_protocol("v4.channel.k8s.io, v5.channel.k8s.io").has_value());
}

TEST_CASE("Stdout and stderr messages come out as chunks of their stream")
{
    auto out = decode_attach_message(channel_message(1, "42\n"));
    REQUIRE(out.has_value());
    CHECK(out->kind == AttachMessage::Kind::output);
    const OutputChunk expected_out{OutputStream::stdout_stream, "42\n"};
    CHECK(out->chunk == expected_out);
    auto err = decode_attach_message(channel_message(2, std::string("a\0b", 3)));
    REQUIRE(err.has_value());
    const OutputChunk expected_err{OutputStream::stderr_stream, std::string("a\0b", 3)};
    CHECK(err->chunk == expected_err);
}

TEST_CASE("The empty message that opens a channel is recognised on channels 0 to 3")
{
    for (unsigned char channel = 0; channel <= 3; ++channel) {
        auto opened = decode_attach_message(channel_message(channel, ""));
        REQUIRE(opened.has_value());
        CHECK(opened->kind == AttachMessage::Kind::opened);
    }
}

TEST_CASE("Status messages carry the status channel's bytes")
{
    auto status = decode_attach_message(channel_message(3, R"({"status":"Success"})"));
    REQUIRE(status.has_value());
    CHECK(status->kind == AttachMessage::Kind::status);
    CHECK(status->status_bytes == R"({"status":"Success"})");
}

TEST_CASE("An attach message that is empty, on another channel, stdin bytes or too long is refused")
{
    CHECK_THAT(channel_refusal(""), Catch::Contains("empty message"));
    CHECK_THAT(channel_refusal(channel_message(4, "{}")), Catch::Contains("channel 4"));
    CHECK_THAT(channel_refusal(channel_message(255, std::string(1, '\0'))), Catch::Contains("channel 255"));
    CHECK_THAT(channel_refusal(channel_message(0, "x")), Catch::Contains("stdin channel"));
    CHECK_THAT(channel_refusal(channel_message(1, std::string(k_max_attach_message_bytes, 'x'))), Catch::Contains("at most"));
    CHECK(decode_attach_message(channel_message(1, std::string(k_max_attach_message_bytes - 1, 'x'))).has_value());
}

TEST_CASE("Stdin goes in messages on channel 0 of at most the stdin message size")
{
    CHECK(stdin_messages("").empty());
    CHECK(stdin_messages("ab") == std::vector<std::string>{channel_message(0, "ab")});
    const std::string big(k_stdin_message_bytes * 2 + 1, 'p');
    const auto messages = stdin_messages(big);
    REQUIRE(messages.size() == 3);
    CHECK(messages[0] == channel_message(0, std::string(k_stdin_message_bytes, 'p')));
    CHECK(messages[2] == channel_message(0, "p"));
}

TEST_CASE("Stdin can be closed only on v5, with channel 255 and the stdin stream's id")
{
    CHECK(close_stdin_message(AttachProtocol::v5) == std::optional<std::string>(std::string("\xff\x00", 2)));
    CHECK_FALSE(close_stdin_message(AttachProtocol::v4).has_value());
}

TEST_CASE("The status channel's Success says nothing more; a Failure keeps its reason and message")
{
    auto success = parse_attach_status(R"({"metadata":{},"status":"Success"})");
    REQUIRE(success.has_value());
    CHECK(success->success);
    auto failure = parse_attach_status(
        R"({"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}})");
    REQUIRE(failure.has_value());
    CHECK_FALSE(failure->success);
    CHECK(failure->reason == "NonZeroExitCode");
    CHECK(failure->message == "command terminated with non-zero exit code");
}

TEST_CASE("A status that is not JSON, not an object, of another status or too long is refused")
{
    for (const std::string& bad : {std::string("nope"), std::string("[]"), std::string(R"({"status":"Maybe"})"),
                                  std::string(R"({"status":1})"), std::string(R"({"status":"Success","status":"Failure"})"),
                                  std::string(R"({"status":"Success"} x)"),
                                  R"({"status":"Success","message":")" + std::string(k_max_attach_status_bytes, 'm') + "\"}"}) {
        INFO(bad.substr(0, 60));
        auto status = parse_attach_status(bad);
        REQUIRE_FALSE(status.has_value());
        CHECK(status.error().code == "engine_protocol");
    }
}

