#include "proto/json_text.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <limits>

using pybox::proto::to_json_text;
namespace json = boost::json;

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
