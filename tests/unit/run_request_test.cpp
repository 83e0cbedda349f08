#include "proto/run_request.hpp"

#include "common/limits.hpp"
#include "proto/box_policy.hpp"

#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <type_traits>

using namespace pybox::proto;
using namespace std::string_literals;

namespace {

std::string error_code_of(std::string_view body)
{
    const auto parsed = parse_run_request(body);
    REQUIRE_FALSE(parsed.has_value());
    return parsed.error().code;
}

std::string error_message_of(std::string_view body)
{
    const auto parsed = parse_run_request(body);
    REQUIRE_FALSE(parsed.has_value());
    return parsed.error().message;
}

}  // namespace

TEST_CASE("A request with only source gets the defaults")
{
    const auto request = parse_run_request(R"({"source": "print(6*7)\n"})");
    REQUIRE(request.has_value());
    CHECK(request->request().source == "print(6*7)\n");
    CHECK(request->request().timeout_s == 2.0);
    CHECK(request->request().image == "stdlib");
    CHECK(request->request().output_limit_bytes == 65'536);
}

TEST_CASE("A request with every key is read exactly")
{
    const auto request = parse_run_request(
        R"({"source": "x", "timeout_s": 0.5, "image": "data", "output_limit_bytes": 100})");
    REQUIRE(request.has_value());
    CHECK(request->request().timeout_s == 0.5);
    CHECK(request->request().image == "data");
    CHECK(request->request().output_limit_bytes == 100);
}

TEST_CASE("An integer timeout is accepted")
{
    const auto request = parse_run_request(R"({"source": "x", "timeout_s": 30})");
    REQUIRE(request.has_value());
    CHECK(request->request().timeout_s == 30.0);
}

TEST_CASE("A timeout is kept to the millisecond, so it reads back the same")
{
    // Found by libFuzzer: Boost.JSON 1.81 read 1.53333333333666666 written back 1 ulp off.
    const auto request = parse_run_request(R"({"source": "x", "timeout_s": 1.53333333333666666})");
    REQUIRE(request.has_value());
    CHECK(request->request().timeout_s == 1.533);
    const auto again = parse_run_request(serialize_run_request(request->request()));
    REQUIRE(again.has_value());
    CHECK(again->request().timeout_s == request->request().timeout_s);
    CHECK(parse_run_request(R"({"source": "x", "timeout_s": 29.9996})")->request().timeout_s == 30.0);
    CHECK(error_code_of(R"({"source": "x", "timeout_s": 30.0004})") == "timeout_out_of_range");
    CHECK(error_code_of(R"({"source": "x", "timeout_s": 0.0996})") == "timeout_out_of_range");
}

TEST_CASE("A serialized request parses back to the same values")
{
    RunRequest request;
    request.source = "print('\xc3\xa9')\n\0x"s;
    request.timeout_s = 0.1;
    request.image = "data";
    request.output_limit_bytes = 1;
    const auto parsed = parse_run_request(serialize_run_request(request));
    REQUIRE(parsed.has_value());
    CHECK(parsed->request().source == request.source);
    CHECK(parsed->request().timeout_s == request.timeout_s);
    CHECK(parsed->request().image == request.image);
    CHECK(parsed->request().output_limit_bytes == request.output_limit_bytes);
}

TEST_CASE("A body that is not JSON is refused as invalid JSON")
{
    CHECK(error_code_of("") == "invalid_json");
    CHECK(error_code_of("source=print(1)") == "invalid_json");
    CHECK(error_code_of(R"({"source": "x")") == "invalid_json");
}

TEST_CASE("Bytes after the JSON object are refused")
{
    CHECK(error_code_of(R"({"source": "x"} {})") == "invalid_json");
    CHECK(error_code_of(R"({"source": "x"}x)") == "invalid_json");
    CHECK(error_message_of(R"({"source": "x"}x)").find("bytes after") != std::string::npos);
}

TEST_CASE("Trailing whitespace after the object is accepted")
{
    CHECK(parse_run_request("{\"source\": \"x\"}\n  \t").has_value());
}

TEST_CASE("Comments and trailing commas are refused")
{
    CHECK(error_code_of("{\"source\": \"x\" /* hi */}") == "invalid_json");
    CHECK(error_code_of(R"({"source": "x",})") == "invalid_json");
}

TEST_CASE("One hundred thousand nested brackets are refused without deep recursion")
{
    const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
    CHECK(error_code_of(deep) == "invalid_json");
    CHECK(error_message_of(deep).find("nested deeper") != std::string::npos);
    const std::string deep_in_object = R"({"source": )" + std::string(100'000, '[');
    CHECK(error_code_of(deep_in_object) == "invalid_json");
}

TEST_CASE("Invalid UTF-8 in a string is refused")
{
    CHECK(error_code_of("{\"source\": \"\xff\xfe\"}") == "invalid_json");
    CHECK(error_code_of("{\"source\": \"\xc0\xaf\"}") == "invalid_json");  // overlong '/'
    CHECK(error_code_of("{\"source\": \"\xed\xa0\x80\"}") == "invalid_json");  // surrogate
}

TEST_CASE("Invalid UTF-8 in a key is refused")
{
    CHECK(error_code_of("{\"sou\xffrce\": \"x\"}") == "invalid_json");
}

TEST_CASE("A repeated key is refused even when both values are valid")
{
    const auto parsed = parse_run_request(R"j({"source": "print(1)", "source": "print(2)"})j");
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == "invalid_request");
    CHECK(parsed.error().message.find("\"source\"") != std::string::npos);
    CHECK(error_code_of(R"({"source": "x", "timeout_s": 1, "timeout_s": 2})") == "invalid_request");
}

TEST_CASE("A key written with escapes still counts as a repeat")
{
    CHECK(error_code_of(R"({"source": "x", "sourc\u0065": "y"})") == "invalid_request");
}

TEST_CASE("A repeated empty key is refused")
{
    CHECK(error_code_of(R"({"": 1, "": 2})") == "invalid_request");
}

TEST_CASE("A body that is not an object is refused")
{
    CHECK(error_code_of(R"(["source", "x"])") == "invalid_request");
    CHECK(error_code_of(R"j("print(1)")j") == "invalid_request");
    CHECK(error_code_of("null") == "invalid_request");
}

TEST_CASE("A missing source is refused")
{
    CHECK(error_code_of("{}") == "invalid_request");
    CHECK(error_message_of(R"({"timeout_s": 1})").find("source") != std::string::npos);
}

TEST_CASE("An unknown key is refused and named")
{
    const auto message = error_message_of(R"({"source": "x", "memory": "1g"})");
    CHECK(message.find("\"memory\"") != std::string::npos);
    CHECK(error_code_of(R"({"source": "x", "network": "host"})") == "invalid_request");
    CHECK(error_code_of(R"({"source": "x", "privileged": true})") == "invalid_request");
}

TEST_CASE("An unknown key with control bytes is quoted safely in the message")
{
    const auto message = error_message_of("{\"source\": \"x\", \"\\u001b[31m\": 1}");
    CHECK(message.find('\x1b') == std::string::npos);
    CHECK(message.find("\\x1b") != std::string::npos);
}

TEST_CASE("Wrong value types are refused")
{
    CHECK(error_code_of(R"({"source": 1})") == "invalid_request");
    CHECK(error_code_of(R"({"source": null})") == "invalid_request");
    CHECK(error_code_of(R"({"source": ["x"]})") == "invalid_request");
    CHECK(error_code_of(R"({"source": "x", "timeout_s": "2"})") == "invalid_request");
    CHECK(error_code_of(R"({"source": "x", "timeout_s": true})") == "invalid_request");
    CHECK(error_code_of(R"({"source": "x", "image": 3})") == "invalid_request");
    CHECK(error_code_of(R"({"source": "x", "output_limit_bytes": "10"})") == "invalid_request");
}

TEST_CASE("A fractional or negative output limit is refused with the allowed range")
{
    CHECK(error_code_of(R"({"source": "x", "output_limit_bytes": 3.5})") == "output_limit_out_of_range");
    CHECK(error_message_of(R"({"source": "x", "output_limit_bytes": 3.5})") ==
          "output_limit_bytes must be an integer between 1 and 65536 (got 3.5).");
    CHECK(error_message_of(R"({"source": "x", "output_limit_bytes": -1})") ==
          "output_limit_bytes must be an integer between 1 and 65536 (got -1).");
}

TEST_CASE("An output limit outside 1 to 65536 is refused")
{
    CHECK(error_code_of(R"({"source": "x", "output_limit_bytes": 0})") == "output_limit_out_of_range");
    CHECK(error_code_of(R"({"source": "x", "output_limit_bytes": 65537})") == "output_limit_out_of_range");
    CHECK(error_code_of(R"({"source": "x", "output_limit_bytes": 18446744073709551615})") ==
          "output_limit_out_of_range");
    CHECK(parse_run_request(R"({"source": "x", "output_limit_bytes": 65536})").has_value());
    CHECK(parse_run_request(R"({"source": "x", "output_limit_bytes": 1})").has_value());
}

// Issue 28 item 9: 65536.0 was refused with "(got 65536)", a value in the range.
TEST_CASE("An output limit written as a whole number with a fraction or exponent is that number")
{
    for (const auto* written : {"65536.0", "6.5536e4", "1.0"}) {
        INFO(written);
        const auto request = parse_run_request(R"({"source": "x", "output_limit_bytes": )"s + written + "}");
        REQUIRE(request.has_value());
        CHECK(request->request().output_limit_bytes == static_cast<std::size_t>(std::stod(written)));
    }
}

TEST_CASE("An output limit with a fraction is refused with a message that shows a value outside the range")
{
    CHECK(error_message_of(R"({"source": "x", "output_limit_bytes": 65537.0})") ==
          "output_limit_bytes must be an integer between 1 and 65536 (got 65537).");
    CHECK(error_message_of(R"({"source": "x", "output_limit_bytes": 0.0})") ==
          "output_limit_bytes must be an integer between 1 and 65536 (got 0).");
    CHECK(error_message_of(R"({"source": "x", "output_limit_bytes": 65535.5})") ==
          "output_limit_bytes must be an integer between 1 and 65536 (got 65535.5).");
    CHECK(error_code_of(R"({"source": "x", "output_limit_bytes": 1e300})") == "output_limit_out_of_range");
}

TEST_CASE("A timeout outside 0.1 to 30 seconds is refused with the allowed range")
{
    CHECK(error_message_of(R"({"source": "x", "timeout_s": 31})") ==
          "timeout_s must be between 0.1 and 30 seconds (got 31).");
    CHECK(error_code_of(R"({"source": "x", "timeout_s": 0.09})") == "timeout_out_of_range");
    CHECK(error_code_of(R"({"source": "x", "timeout_s": -2})") == "timeout_out_of_range");
    CHECK(error_code_of(R"({"source": "x", "timeout_s": 0})") == "timeout_out_of_range");
    CHECK(parse_run_request(R"({"source": "x", "timeout_s": 0.1})").has_value());
}

TEST_CASE("A timeout too large for a double is refused")
{
    CHECK_FALSE(parse_run_request(R"({"source": "x", "timeout_s": 1e400})").has_value());
}

TEST_CASE("An image name no image can have is refused and the accepted ones are listed")
{
    const auto parsed = parse_run_request(R"({"source": "x", "image": "python:3.12"})");
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == "unknown_image");
    CHECK(parsed.error().message == "image must be one of stdlib, data, or the name of an own image built with "
                                    "`pybox image build` (got \"python:3.12\").");
}

TEST_CASE("An own image's name is accepted; whether it exists is the daemon's pre-run check")
{
    const auto parsed = parse_run_request(R"({"source": "x", "image": "my-tools2"})");
    REQUIRE(parsed.has_value());
    CHECK(parsed->request().image == "my-tools2");
    for (const auto* bad : {"My", "-a", "a_b", "0a", "a.b", "abcdefghijklmnopqrstuvwxyz0123456"}) {
        INFO(bad);
        const auto refused = parse_run_request(R"({"source": "x", "image": ")" + std::string(bad) + "\"}");
        REQUIRE_FALSE(refused.has_value());
        CHECK(refused.error().code == "unknown_image");
    }
}

TEST_CASE("A source of exactly 65536 bytes is accepted and one byte more is refused")
{
    const std::string limit = R"({"source": ")" + std::string(65'536, 'a') + "\"}";
    CHECK(parse_run_request(limit).has_value());
    const std::string over = R"({"source": ")" + std::string(65'537, 'a') + "\"}";
    CHECK(error_code_of(over) == "source_too_large");
    CHECK(error_message_of(over) == "source must be at most 65536 bytes (got 65537).");
}

TEST_CASE("A source of ten megabytes is refused as too large")
{
    const std::string body = R"({"source": ")" + std::string(10 * 1024 * 1024, 'a') + "\"}";
    CHECK(error_code_of(body) == "source_too_large");
}

TEST_CASE("The source limit counts UTF-8 bytes, not characters")
{
    std::string source;
    for (int i = 0; i < 32'769; ++i) {
        source += "\xc3\xa9";
    }
    CHECK(error_code_of(R"({"source": ")" + source + "\"}") == "source_too_large");
}

TEST_CASE("Validation refuses a source that is not UTF-8 before it is sent")
{
    RunRequest request;
    request.source = "print('\xff')";
    const auto valid = validated_run_request(request);
    REQUIRE_FALSE(valid.has_value());
    CHECK(valid.error().code == "invalid_request");
}

TEST_CASE("Validation refuses a timeout that is not a finite number")
{
    RunRequest request;
    request.timeout_s = std::numeric_limits<double>::quiet_NaN();
    CHECK_FALSE(validated_run_request(request).has_value());
    request.timeout_s = std::numeric_limits<double>::infinity();
    CHECK_FALSE(validated_run_request(request).has_value());
}

// A ValidRunRequest comes only from the checks: nothing can make one from an unchecked request.
static_assert(!std::is_default_constructible_v<ValidRunRequest>);
static_assert(!std::is_constructible_v<ValidRunRequest, RunRequest>);
static_assert(!std::is_constructible_v<ValidRunRequest, RunRequest, pybox::proto::BoxPolicy>);

TEST_CASE("A valid request carries its image's policy, with the larger /tmp when it moves files")
{
    const auto plain = parse_run_request(R"({"source": "x", "image": "data"})");
    REQUIRE(plain.has_value());
    CHECK(plain->policy() == *pybox::proto::policy_for_image("data"));

    const auto moving = parse_run_request(R"({"source": "x", "files": {"outputs": true}})");
    REQUIRE(moving.has_value());
    auto expected = *pybox::proto::policy_for_image("stdlib");
    expected.tmpfs_bytes = pybox::limits::k_files_tmpfs_bytes;
    CHECK(moving->policy() == expected);
}

TEST_CASE("A valid request's program is replaced only by one that passes the source checks")
{
    const auto request = parse_run_request(R"({"source": "x", "timeout_s": 3, "image": "data"})");
    REQUIRE(request.has_value());
    const auto corrected = request->with_source("print(1)\n");
    REQUIRE(corrected.has_value());
    CHECK(corrected->request().source == "print(1)\n");
    CHECK(corrected->request().timeout_s == 3.0);
    CHECK(corrected->request().image == "data");
    CHECK(corrected->policy() == request->policy());
    CHECK(request->with_source("print('\xff')").error().code == "invalid_request");
    CHECK(request->with_source(std::string(pybox::limits::k_max_source_bytes + 1, 'a')).error().code == "source_too_large");
}
