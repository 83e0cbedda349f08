#include "proto/image_request.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace pybox::proto;

namespace {

pybox::Error build_error(const std::string& body)
{
    const auto parsed = parse_image_build_request(body);
    REQUIRE_FALSE(parsed.has_value());
    return parsed.error();
}

}  // namespace

TEST_CASE("An image build request round-trips")
{
    const ImageBuildRequest request{"my-tools", "format=1\nbase=stdlib\ninclude=python3-six\n"};
    const auto parsed = parse_image_build_request(serialize_image_build_request(request));
    REQUIRE(parsed.has_value());
    CHECK(parsed->name == request.name);
    CHECK(parsed->recipe == request.recipe);
    const auto removal = parse_image_remove_request(serialize_image_remove_request({"my-tools"}));
    REQUIRE(removal.has_value());
    CHECK(removal->name == "my-tools");
}

TEST_CASE("An image build request needs exactly a name and a recipe, both strings")
{
    CHECK(build_error("").code == "invalid_json");
    CHECK(build_error("[]").code == "invalid_request");
    CHECK(build_error(R"({"name": "x"})").message == "\"recipe\" is required.");
    CHECK(build_error(R"({"recipe": "x"})").message == "\"name\" is required.");
    CHECK(build_error(R"({"name": "x", "recipe": 1})").message == "\"recipe\" must be a string.");
    CHECK(build_error(R"({"name": "x", "recipe": "", "base": "data"})").code == "invalid_request");
    CHECK(build_error(R"({"name": "x", "name": "y", "recipe": ""})").code == "invalid_request");
}

TEST_CASE("An image build or removal refuses a name outside the charset or a built-in one")
{
    for (const auto* name : {"stdlib", "data", "../etc", "A", "", "a b"}) {
        INFO(name);
        CHECK(build_error(R"({"name": ")" + std::string(name) + R"(", "recipe": ""})").code == "image_name_invalid");
        const auto removal = parse_image_remove_request(R"({"name": ")" + std::string(name) + R"("})");
        REQUIRE_FALSE(removal.has_value());
        CHECK(removal.error().code == "image_name_invalid");
    }
}

TEST_CASE("A recipe over the cap is refused before the daemon reads it")
{
    const std::string at_cap(k_max_own_recipe_bytes, '#');
    CHECK(parse_image_build_request(R"({"name": "x", "recipe": ")" + at_cap + "\"}").has_value());
    CHECK_THAT(build_error(R"({"name": "x", "recipe": ")" + at_cap + "#\"}").message,
               Catch::Contains("at most 16384 bytes"));
}
