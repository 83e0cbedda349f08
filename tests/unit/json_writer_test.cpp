// util/json_writer.hpp in both forms: JSON text (Boost's serialize with shortest doubles) and
// RFC 8785's canonical form, on the cases where they are easy to get wrong: number forms, key
// order by UTF-16 code units, escapes, non-ASCII text, and what has no canonical form.
#include "util/json_writer.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <limits>
#include <string>

using pybox::util::JsonForm;
using pybox::util::to_json_text;
using pybox::util::write_json;
namespace json = boost::json;

namespace {

std::string canonical(const json::value& value)
{
    auto written = write_json(value, JsonForm::canonical);
    INFO(written.problem);
    REQUIRE(written.ok());
    return written.text;
}

std::string refusal(const json::value& value)
{
    auto written = write_json(value, JsonForm::canonical);
    REQUIRE_FALSE(written.ok());
    return written.problem;
}

}  // namespace

TEST_CASE("Doubles are written in their shortest form and keep a decimal point")
{
    CHECK(to_json_text(json::value(2.0)) == "2.0");
    CHECK(to_json_text(json::value(0.5)) == "0.5");
    CHECK(to_json_text(json::value(0.166)) == "0.166");
    CHECK(to_json_text(json::value(1e-7)) == "1e-07");
}

TEST_CASE("JSON text reads back to the same value, doubles staying doubles")
{
    const json::value document = json::parse(
        R"({"a":[1,-2,3.25,true,null,"x\u0000\u001b"],"b":{"c":2.0,"d":18446744073709551615},"":"\u00e9"})");
    const auto text = to_json_text(document);
    CHECK(json::parse(text) == document);
    CHECK(json::parse(text).at("b").at("c").is_double());
}

TEST_CASE("A non-finite double becomes null instead of invalid JSON")
{
    CHECK(to_json_text(json::value(std::numeric_limits<double>::infinity())) == "null");
}

TEST_CASE("JSON text keeps the members' order and writes strings and integers as boost::json::serialize does")
{
    const json::value document = json::parse(
        R"({"z":1,"a":-9223372036854775808,"m":18446744073709551615,"s":"\"\\\/\b\f\n\r\t\u0001\u001f\u007f\u00e9\u20ac\ud83d\ude00"})");
    CHECK(to_json_text(document) == json::serialize(document));
    CHECK(to_json_text(document).starts_with(R"({"z":1,"a":-9223372036854775808,"m":18446744073709551615,)"));
    // Text is not checked for UTF-8: its bytes are written as they are.
    CHECK(to_json_text(json::value("\xff")) == "\"\xff\"");
    CHECK(write_json(json::value("\xff"), JsonForm::text).ok());
}

TEST_CASE("Canonical numbers are ECMAScript's: shortest digits, exponents from 1e21 and below 1e-6, -0 as 0")
{
    CHECK(canonical(json::value(1e30)) == "1e+30");
    CHECK(canonical(json::value(4.50)) == "4.5");
    CHECK(canonical(json::value(2e-3)) == "0.002");
    CHECK(canonical(json::value(0.000001)) == "0.000001");
    CHECK(canonical(json::value(1e-7)) == "1e-7");
    CHECK(canonical(json::value(-0.0)) == "0");
    CHECK(canonical(json::value(2.0)) == "2");
    CHECK(canonical(json::value(1e21)) == "1e+21");
    CHECK(canonical(json::value(999999999999999900000.0)) == "999999999999999900000");
    CHECK(canonical(json::value(333333333.33333329)) == "333333333.3333333");
    CHECK(canonical(json::value(5e-324)) == "5e-324");
    CHECK(canonical(json::value(1.7976931348623157e308)) == "1.7976931348623157e+308");
    CHECK(canonical(json::value(std::bit_cast<double>(std::uint64_t{0x3eb0c6f7a0b5ed8c}))) == "9.999999999999997e-7");
    // Integers as the double they denote, when one holds them exactly.
    CHECK(canonical(json::value(std::int64_t{-42})) == "-42");
    CHECK(canonical(json::value(std::int64_t{9007199254740992})) == "9007199254740992");
    CHECK(canonical(json::value(std::uint64_t{9223372036854775808ull})) == "9223372036854776000");
    CHECK(canonical(json::value(std::int64_t{1000000000000000000})) == "1000000000000000000");
}

TEST_CASE("Canonical members are sorted by their keys' UTF-16 code units, not by their UTF-8 bytes")
{
    // U+1F600 and U+FB33 sort one way by UTF-16 code units (U+1F600's first surrogate, 0xD83D, is
    // below 0xFB33) and the other way by UTF-8 bytes (EF AC B3 is below F0 9F 98 80).
    json::object object;
    object["\xef\xac\xb3"] = 1;  // U+FB33
    object["\xf0\x9f\x98\x80"] = 2;  // U+1F600
    object["\xe2\x82\xac"] = 3;  // U+20AC
    object["b"] = 4;
    object["a"] = 5;
    object["\r"] = 6;
    object[""] = 7;
    object["ab"] = 8;
    CHECK(canonical(object) ==
          "{\"\":7,\"\\r\":6,\"a\":5,\"ab\":8,\"b\":4,\"\xe2\x82\xac\":3,\"\xf0\x9f\x98\x80\":2,\"\xef\xac\xb3\":1}");
    // The text form keeps the order the members were made in.
    CHECK(to_json_text(object).starts_with("{\"\xef\xac\xb3\":1,"));
}

TEST_CASE("Both forms escape only what JSON requires, controls as lower-case \\u00xx, and keep non-ASCII as UTF-8")
{
    const json::value text("\"\\/\b\f\n\r\t\x01\x1f\x7f\xc3\xa9\xf0\x9f\x98\x80");
    const std::string expected = "\"\\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\xc3\xa9\xf0\x9f\x98\x80\"";
    CHECK(canonical(text) == expected);
    CHECK(to_json_text(text) == expected);
}

TEST_CASE("A value RFC 8785 cannot express has no canonical form, and the reason says why")
{
    CHECK(refusal(json::value(std::numeric_limits<double>::quiet_NaN())) == "a number is not finite");
    CHECK(refusal(json::value(-std::numeric_limits<double>::infinity())) == "a number is not finite");
    CHECK(refusal(json::value(std::int64_t{9007199254740993})) == "the integer 9007199254740993 is not exactly a double");
    CHECK(refusal(json::value(std::numeric_limits<std::uint64_t>::max())) ==
          "the integer 18446744073709551615 is not exactly a double");
    CHECK(refusal(json::value(std::numeric_limits<std::int64_t>::max())) ==
          "the integer 9223372036854775807 is not exactly a double");
    CHECK(refusal(json::value("\xc0\xaf")) == "a string is not valid UTF-8");  // overlong
    CHECK(refusal(json::value("\xed\xa0\x80")) == "a string is not valid UTF-8");  // a surrogate
    json::object bad_key;
    bad_key["ok"] = std::numeric_limits<double>::infinity();
    bad_key["\xff"] = 1;
    // Every key is checked before any member is written.
    CHECK(refusal(bad_key) == "a key is not valid UTF-8");
}
