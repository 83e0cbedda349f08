// The strict parser of POST /v1/setup bodies and the body the client sends.
#include "proto/setup_request.hpp"

#include <catch2/catch.hpp>

using pybox::proto::parse_setup_request;
using pybox::proto::serialize_setup_request;
using pybox::proto::SetupRequest;

TEST_CASE("An empty setup body builds stdlib without refreshing the lock")
{
    const auto request = parse_setup_request("");
    REQUIRE(request.has_value());
    CHECK(request->images == std::vector<std::string>{"stdlib"});
    CHECK_FALSE(request->refresh_lock);
}

TEST_CASE("A setup body names images once each and may refresh the lock")
{
    const auto request = parse_setup_request(R"({"images": ["data", "stdlib", "data"], "refresh_lock": true})");
    REQUIRE(request.has_value());
    CHECK(request->images == std::vector<std::string>{"data", "stdlib"});
    CHECK(request->refresh_lock);
}

TEST_CASE("A setup body with an unknown key, a wrong type or an unknown image is refused")
{
    CHECK(parse_setup_request(R"({"image": ["stdlib"]})").error().code == "invalid_request");
    CHECK(parse_setup_request(R"({"refresh_lock": "yes"})").error().code == "invalid_request");
    CHECK(parse_setup_request(R"({"images": []})").error().code == "invalid_request");
    CHECK(parse_setup_request(R"({"images": ["nope"]})").error().code == "unknown_image");
    CHECK(parse_setup_request(R"([1, 2])").error().code == "invalid_request");
    CHECK(parse_setup_request(R"({"images": )").error().code == "invalid_json");
}

TEST_CASE("A setup body that repeats a key is refused and the key is named")
{
    const auto request = parse_setup_request(R"({"refresh_lock": false, "refresh_lock": true})");
    REQUIRE_FALSE(request.has_value());
    CHECK(request.error().code == "invalid_request");
    CHECK(request.error().message.find("\"refresh_lock\"") != std::string::npos);
}

TEST_CASE("The body the client sends reads back as the same request")
{
    const SetupRequest request{{"data", "stdlib"}, true};
    const auto read = parse_setup_request(serialize_setup_request(request));
    REQUIRE(read.has_value());
    CHECK(read->images == request.images);
    CHECK(read->refresh_lock);
    CHECK(serialize_setup_request(SetupRequest{}) == R"({"refresh_lock":false})");
}
