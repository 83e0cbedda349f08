// RFC 8785 (JCS) canonical form, against the RFC's examples and the test data of its authors'
// reference implementation (cyberphone/json-canonicalization, testdata/ and the ES6 number file's
// sample lines).
#include "proto/canonical_json.hpp"
#include "util/json_writer.hpp"
#include "util/strict_json.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

using pybox::proto::canonical_json;
namespace json = boost::json;

namespace {

std::string canonical_of_text(std::string_view text)
{
    auto parsed = pybox::util::parse_json_strictly(text, 32);
    REQUIRE(parsed.ok());
    auto canonical = canonical_json(parsed.value);
    REQUIRE(canonical.has_value());
    return *canonical;
}

std::string canonical_of_bits(std::uint64_t bits)
{
    auto canonical = canonical_json(json::value(std::bit_cast<double>(bits)));
    REQUIRE(canonical.has_value());
    return *canonical;
}

}  // namespace

TEST_CASE("Canonical numbers follow the ES6 samples of the reference test file")
{
    CHECK(canonical_of_bits(0x4340000000000001) == "9007199254740994");
    CHECK(canonical_of_bits(0x4340000000000002) == "9007199254740996");
    CHECK(canonical_of_bits(0x444b1ae4d6e2ef50) == "1e+21");
    CHECK(canonical_of_bits(0x3eb0c6f7a0b5ed8d) == "0.000001");
    CHECK(canonical_of_bits(0x3eb0c6f7a0b5ed8c) == "9.999999999999997e-7");
    CHECK(canonical_of_bits(0x8000000000000000) == "0");
    CHECK(canonical_of_bits(0) == "0");
}

TEST_CASE("Canonical numbers follow RFC 8785's examples")
{
    CHECK(canonical_of_text("1E30") == "1e+30");
    CHECK(canonical_of_text("4.50") == "4.5");
    CHECK(canonical_of_text("2e-3") == "0.002");
    CHECK(canonical_of_text("0.000001") == "0.000001");
    CHECK(canonical_of_text("1e-7") == "1e-7");
    CHECK(canonical_of_text("-0.0") == "0");
    CHECK(canonical_of_text("333333333.33333329") == "333333333.3333333");
    CHECK(canonical_of_text("0.000000000000000000000000001") == "1e-27");
    CHECK(canonical_of_text("1e21") == "1e+21");
    CHECK(canonical_of_text("999999999999999900000") == "999999999999999900000");
    CHECK(canonical_of_text("-1.5e-300") == "-1.5e-300");
    CHECK(canonical_of_text("5e-324") == "5e-324");
    CHECK(canonical_of_text("1.7976931348623157e308") == "1.7976931348623157e+308");
    CHECK(canonical_of_text("2.0") == "2");
    CHECK(canonical_of_text("-42") == "-42");
}

TEST_CASE("The reference implementation's values file canonicalizes to its expected output")
{
    const std::string input = R"({
  "numbers": [1E30, 4.50, 333333333.33333329, 2e-3, 0.000000000000000000000000001],
  "escaping": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
})";
    CHECK(canonical_of_text(input) ==
          "{\"escaping\":\"\xE2\x82\xAC$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\",\"literals\":[null,true,false],"
          "\"numbers\":[1e+30,4.5,333333333.3333333,0.002,1e-27]}");
}

TEST_CASE("Keys are sorted by their UTF-16 code units (the reference's weird file)")
{
    const std::string input = R"({
  "\u20ac": "Euro Sign",
  "1": "One",
  "\u0080": "Control\u007f",
  "\ud83d\ude02": "Smiley",
  "\u00f6": "Latin Small Letter O With Diaeresis",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "</script>": "Browser Challenge"
})";
    CHECK(canonical_of_text(input) ==
          "{\"1\":\"One\",\"</script>\":\"Browser Challenge\",\"\xC2\x80\":\"Control\x7F\","
          "\"\xC3\xB6\":\"Latin Small Letter O With Diaeresis\",\"\xE2\x82\xAC\":\"Euro Sign\","
          "\"\xF0\x9F\x98\x82\":\"Smiley\",\"\xEF\xAC\xB3\":\"Hebrew Letter Dalet With Dagesh\"}");
}

TEST_CASE("RFC 8785's sorting example orders keys as UTF-16, not as UTF-8 bytes")
{
    // U+1F600 (a surrogate pair, 0xD83D...) sorts before U+FB33 in UTF-16, after it in UTF-8.
    const std::string input = R"({"\u20ac":"Euro","\r":"CR","\ufb33":"Dalet","1":"One","\ud83d\ude00":"Smiley","\u0080":"C","\u00f6":"o"})";
    CHECK(canonical_of_text(input) ==
          "{\"\\r\":\"CR\",\"1\":\"One\",\"\xC2\x80\":\"C\",\"\xC3\xB6\":\"o\",\"\xE2\x82\xAC\":\"Euro\","
          "\"\xF0\x9F\x98\x80\":\"Smiley\",\"\xEF\xAC\xB3\":\"Dalet\"}");
}

TEST_CASE("Nested structures are sorted and stripped of whitespace (the reference's structures file)")
{
    const std::string input = R"({
  "1": {"f": {"f": "hi","F": 5} ,"\n": 56.0},
  "10": { },
  "": "empty",
  "a": { },
  "111": [ { } ],
  "A": { }
})";
    CHECK(canonical_of_text(input) ==
          R"({"":"empty","1":{"\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{}],"A":{},"a":{}})");
}

TEST_CASE("Unnormalized Unicode is kept as it is (the reference's unicode file)")
{
    CHECK(canonical_of_text("{\n  \"Unnormalized Unicode\":\"\\u1e0d\\u0307\"\n}\n") ==
          "{\"Unnormalized Unicode\":\"\xE1\xB8\x8D\xCC\x87\"}");
}

TEST_CASE("What RFC 8785 cannot express has no canonical form")
{
    CHECK(canonical_json(json::value(std::numeric_limits<double>::infinity())).error().code == "not_canonical");
    CHECK_FALSE(canonical_json(json::value(std::numeric_limits<double>::quiet_NaN())).has_value());
    CHECK_FALSE(canonical_json(json::value(std::int64_t{9007199254740993})).has_value());
    CHECK_FALSE(canonical_json(json::value(std::uint64_t{18446744073709551615u})).has_value());
    CHECK_FALSE(canonical_json(json::value(std::string("\xFF"))).has_value());
    CHECK_FALSE(canonical_json(json::value(std::string("\xED\xA0\x80"))).has_value());  // a surrogate in UTF-8
    CHECK_FALSE(canonical_json(json::object{{"\xC0\x80", 1}}).has_value());             // an overlong key
    CHECK(*canonical_json(json::value(std::int64_t{9007199254740992})) == "9007199254740992");
    CHECK(*canonical_json(json::value(std::numeric_limits<std::int64_t>::min())) == "-9223372036854776000");
}

TEST_CASE("Doubles written in their shortest form read back exactly, so their canonical text is stable")
{
    // Boost 1.81's own parser misses the nearest double for some 17-digit texts; the strict
    // reader must not.
    std::mt19937_64 random(13);
    std::uniform_real_distribution<double> seconds(0, 100);
    for (int i = 0; i < 20000; ++i) {
        const double number = seconds(random) / (i % 7 + 1);
        const auto parsed = pybox::util::parse_json_strictly(pybox::util::to_json_text(json::value(number)), 4);
        REQUIRE(parsed.ok());
        REQUIRE(parsed.value.is_double());
        REQUIRE(std::bit_cast<std::uint64_t>(parsed.value.get_double()) == std::bit_cast<std::uint64_t>(number));
    }
}

TEST_CASE("A number beyond a double's range is refused by the strict reader, not read as infinity")
{
    for (const char* text : {"[1141502e552]", "{\"a\":-1e999}", "1e99999"}) {
        const auto parsed = pybox::util::parse_json_strictly(text, 4);
        INFO(text);
        CHECK_FALSE(parsed.ok());
        CHECK(parsed.problem == "a number is too large");
        CHECK(parsed.number_too_large);
    }
    CHECK(pybox::util::parse_json_strictly("[1.7976931348623157e308, 5e-324]", 4).ok());
}

TEST_CASE("The strict reader's refusal names a repeated key as a printable excerpt, or says why the text is not JSON")
{
    CHECK(pybox::util::parse_json_strictly("{\"a\":1,\"a\":2}", 4).refusal() == "repeats the key \"a\"");
    CHECK(pybox::util::parse_json_strictly("{\"\\u001b[2J\":1,\"\\u001b[2J\":2}", 4).refusal() ==
          "repeats the key \"\\x1b[2J\"");
    CHECK(pybox::util::parse_json_strictly("{\"a\":", 4).refusal() == "is not JSON: it ends before the JSON value does");
    CHECK(pybox::util::parse_json_strictly("[1e400]", 4).refusal() == "is not JSON: a number is too large");
}
