// The socket API's answers (proto/answers.hpp): what the daemon writes reads back strictly, and
// a client reads a newer daemon's answers tolerantly.
#include "proto/answers.hpp"
#include "proto/api.hpp"
#include "tests/support/sample_answers.hpp"

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

using namespace pybox::proto;
using namespace pybox::util;
namespace json = boost::json;
using pybox::test::sample_attempts;
using pybox::test::sample_doctor;
using pybox::test::sample_images;
using pybox::test::sample_pool_start;
using pybox::test::sample_setup;
using pybox::test::sample_start;

namespace {

template <class Answer>
void check_round_trip(const Answer& answer, pybox::Expected<Answer> (*read)(const json::value&, ReadMode))
{
    const auto strict = read(to_json(answer), ReadMode::strict);
    REQUIRE(strict.has_value());
    CHECK(*strict == answer);
}

// A key this build does not know, added to the document and to each object of its arrays.
json::value with_added_keys(json::value document)
{
    for (auto& [key, value] : document.as_object())
        if (value.is_array())
            for (auto& item : value.as_array())
                if (item.is_object()) item.as_object()["added_later"] = json::array{1, "two"};
    document.as_object()["added_later"] = json::object{{"x", 1}};
    return document;
}

template <class Answer>
void check_added_keys(const Answer& answer, pybox::Expected<Answer> (*read)(const json::value&, ReadMode))
{
    const auto document = with_added_keys(to_json(answer));
    const auto strict = read(document, ReadMode::strict);
    REQUIRE_FALSE(strict.has_value());
    CHECK(strict.error().code == "invalid_answer");
    CHECK(strict.error().message.find("added_later is not a known field") != std::string::npos);
    const auto tolerant = read(document, ReadMode::tolerant);
    REQUIRE(tolerant.has_value());
    CHECK(*tolerant == answer);
}

}  // namespace

TEST_CASE("Every answer the daemon writes reads back strictly as the same answer")
{
    check_round_trip(PingAnswer{true, "pyboxd", "0.1.0", "v1"}, &ping_answer_from_json);
    check_round_trip(static_cast<const EngineStatus&>(sample_start()), &engine_status_from_json);
    check_round_trip(EngineStatus{}, &engine_status_from_json);
    check_round_trip(sample_start(), &engine_start_from_json);
    check_round_trip(sample_pool_start(), &engine_start_from_json);
    check_round_trip(static_cast<const EngineStatus&>(sample_pool_start()), &engine_status_from_json);
    check_round_trip(EngineStopAnswer{false, true, true, "/r/engine/docker.sock", 0.4, {"removed stale sockets"}},
                     &engine_stop_from_json);
    check_round_trip(sample_setup(), &setup_answer_from_json);
    check_round_trip(sample_images(), &image_list_from_json);
    check_round_trip(sample_attempts(), &attempts_answer_from_json);
    check_round_trip(sample_doctor(), &doctor_answer_from_json);
    check_round_trip(pybox::test::sample_receipts(), &receipt_list_from_json);
    check_round_trip(ErrorAnswer{"setup_busy", "Another pybox setup is running.", true}, &error_answer_from_json);
}

TEST_CASE("Keys a newer daemon adds are refused strictly and ignored tolerantly")
{
    check_added_keys(PingAnswer{true, "pyboxd", "0.1.0", "v1"}, &ping_answer_from_json);
    check_added_keys(sample_start(), &engine_start_from_json);
    check_added_keys(sample_pool_start(), &engine_start_from_json);
    check_added_keys(EngineStopAnswer{false, true, false, "/s", 0.4, {}}, &engine_stop_from_json);
    check_added_keys(sample_setup(), &setup_answer_from_json);
    check_added_keys(sample_images(), &image_list_from_json);
    check_added_keys(sample_attempts(), &attempts_answer_from_json);
    check_added_keys(sample_doctor(), &doctor_answer_from_json);
    check_added_keys(pybox::test::sample_receipts(), &receipt_list_from_json);
}

TEST_CASE("A doctor verdict this build does not know is refused strictly and kept tolerantly")
{
    auto document = to_json(sample_doctor());
    document.at("checks").at(0).as_object()["verdict"] = "warning";
    CHECK_FALSE(doctor_answer_from_json(document, ReadMode::strict).has_value());
    const auto tolerant = doctor_answer_from_json(document, ReadMode::tolerant);
    REQUIRE(tolerant.has_value());
    CHECK(tolerant->checks.at(0).verdict == "warning");
}

TEST_CASE("A setup status this build does not know is refused strictly and kept tolerantly")
{
    auto document = to_json(sample_setup());
    document.at("images").at(0).as_object()["status"] = "fetched";
    CHECK_FALSE(setup_answer_from_json(document, ReadMode::strict).has_value());
    const auto tolerant = setup_answer_from_json(document, ReadMode::tolerant);
    REQUIRE(tolerant.has_value());
    CHECK(tolerant->images.at(0).status == "fetched");
}

TEST_CASE("A replaced image's removal without the image it replaced is refused in both modes")
{
    auto document = to_json(sample_setup());
    document.at("images").at(0).as_object().erase("previous_image_id");
    for (const auto mode : {ReadMode::strict, ReadMode::tolerant}) {
        const auto read = setup_answer_from_json(document, mode);
        REQUIRE_FALSE(read.has_value());
        CHECK(read.error().message.find("previous_image_removed comes only with previous_image_id") != std::string::npos);
    }
}

TEST_CASE("A settled attempt's box this build does not know is refused strictly and kept tolerantly")
{
    auto document = to_json(sample_attempts());
    document.at("settled").at(0).as_object()["box"] = "ADOPTED";
    CHECK_FALSE(attempts_answer_from_json(document, ReadMode::strict).has_value());
    const auto tolerant = attempts_answer_from_json(document, ReadMode::tolerant);
    REQUIRE(tolerant.has_value());
    CHECK(tolerant->settled.at(0).box == "ADOPTED");
}

TEST_CASE("An answer with a missing key or a wrong type is refused in both modes, naming the field")
{
    auto document = to_json(static_cast<const EngineStatus&>(sample_start()));
    document.as_object().erase("verified");
    for (const auto mode : {ReadMode::strict, ReadMode::tolerant}) {
        const auto read = engine_status_from_json(document, mode);
        REQUIRE_FALSE(read.has_value());
        CHECK(read.error().code == "invalid_answer");
        CHECK(read.error().message.find("verified is missing") != std::string::npos);
    }
    document = to_json(sample_images());
    document.at("images").at(0).as_object()["present"] = "yes";
    const auto read = image_list_from_json(document, ReadMode::tolerant);
    REQUIRE_FALSE(read.has_value());
    CHECK(read.error().message.find("images[0].present must be true, false or null") != std::string::npos);
}

TEST_CASE("An error body with added keys gives the daemon's code and message")
{
    const auto error = parse_error_body(
        409, R"({"error":{"code":"setup_busy","message":"Busy.","retryable":true,"retry_after_s":5},"hint":"x"})");
    CHECK(error.code == "setup_busy");
    CHECK(error.message == "Busy.");
}

TEST_CASE("A body that is not an error answer is quoted with its HTTP status")
{
    const auto error = parse_error_body(502, "<html>bad gateway</html>");
    CHECK(error.code == "http_502");
    CHECK(error.message == "The daemon answered HTTP 502: <html>bad gateway</html>");
}

TEST_CASE("A status without a pool has no engines key, and an older daemon's status reads as no pool")
{
    const auto document = to_json(static_cast<const EngineStatus&>(sample_start()));
    CHECK_FALSE(document.as_object().contains("engines"));
    for (const auto mode : {ReadMode::strict, ReadMode::tolerant}) {
        const auto read = engine_status_from_json(document, mode);
        REQUIRE(read.has_value());
        CHECK(read->engines.empty());
    }
}

TEST_CASE("A pool status keeps the local engine's keys meaning the same and lists every engine in order")
{
    const auto document = to_json(sample_pool_start());
    CHECK(document.at("engine_socket") == "/r/engine/docker.sock");
    const auto& engines = document.at("engines").as_array();
    REQUIRE(engines.size() == 2);
    CHECK(engines[0].at("id") == "local");
    CHECK(engines[0].at("busy") == 2);
    CHECK(engines[1].at("verified") == false);
    CHECK(engines[1].at("problems").at(0).at("check") == "ping");
}

TEST_CASE("A pool engine with a missing key is refused in both modes, naming the field")
{
    auto document = to_json(sample_pool_start());
    document.at("engines").as_array()[1].as_object().erase("busy");
    for (const auto mode : {ReadMode::strict, ReadMode::tolerant}) {
        const auto read = engine_start_from_json(document, mode);
        REQUIRE_FALSE(read.has_value());
        CHECK(read.error().message.find("engines[1].busy") != std::string::npos);
    }
}
