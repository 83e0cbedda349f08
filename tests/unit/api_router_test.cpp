// The socket API's routing pieces that need no socket: the answer for an error.
#include "daemon/server/api_router.hpp"

#include <catch2/catch.hpp>

using pybox::make_error;
using pybox::daemon::error_response;

TEST_CASE("Error answers take their status and retryable flag from the one error table")
{
    const auto status_of = [](const char* code) { return error_response(make_error(code, "")).status; };
    CHECK(status_of("images_file_invalid") == 409);
    CHECK(status_of("lock_missing") == 409);
    CHECK(status_of("image_not_built") == 409);
    CHECK(status_of("image_mismatch") == 409);
    CHECK(status_of("image_missing") == 409);
    CHECK(status_of("engine_unreachable") == 503);
    CHECK(status_of("engine_timeout") == 503);
    CHECK(status_of("invalid_json") == 400);
    CHECK(status_of("timeout_out_of_range") == 400);
    CHECK(status_of("source_too_large") == 400);
    CHECK(status_of("unknown_image") == 400);
    CHECK(status_of("no_such_endpoint") == 404);
    CHECK(status_of("engine_no_such_object") == 409);
    CHECK(status_of("file_unwritable") == 500);

    const auto busy = error_response(make_error("setup_busy", "Another pybox setup is running."));
    CHECK(busy.status == 409);
    CHECK(busy.body == R"({"error":{"code":"setup_busy","message":"Another pybox setup is running.","retryable":true}})");
}

TEST_CASE("A code outside the table, such as a startup failure, is answered as internal_error")
{
    const auto answer = error_response(make_error("invalid_runtime_dir", "PYBOX_HOME must be absolute."));
    CHECK(answer.status == 500);
    CHECK(answer.body ==
          R"({"error":{"code":"internal_error","message":"PYBOX_HOME must be absolute.","retryable":false}})");
}
