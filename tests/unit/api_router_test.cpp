// The socket API's routing table pieces that need no socket: the status of each error code and
// the strict setup body.
#include "daemon/server/api_router.hpp"
#include "daemon/server/setup_request.hpp"

#include <catch2/catch.hpp>

using pybox::make_error;
using pybox::daemon::http_status_for;
using pybox::daemon::parse_setup_request;

TEST_CASE("Error codes map to HTTP statuses through one function")
{
    CHECK(http_status_for(make_error("image_not_built", "")) == 409);
    CHECK(http_status_for(make_error("image_mismatch", "")) == 409);
    CHECK(http_status_for(make_error("image_missing", "")) == 409);
    CHECK(http_status_for(make_error("engine_unreachable", "")) == 503);
    CHECK(http_status_for(make_error("engine_timeout", "")) == 503);
    CHECK(http_status_for(make_error("invalid_json", "")) == 400);
    CHECK(http_status_for(make_error("timeout_out_of_range", "")) == 400);
    CHECK(http_status_for(make_error("source_too_large", "")) == 400);
    CHECK(http_status_for(make_error("unknown_image", "")) == 400);
    CHECK(http_status_for(make_error("attempt_write_failed", "")) == 500);
}

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
