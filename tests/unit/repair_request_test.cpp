// The repair request (read strictly from untrusted JSON) and the repair record's round trip.
#include "common/limits.hpp"
#include "proto/repair.hpp"
#include "tests/support/sample_receipt.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

using namespace pybox::proto;
using namespace pybox::util;

namespace {

std::string refusal(std::string_view body)
{
    auto parsed = parse_repair_request(body);
    INFO(body);
    REQUIRE_FALSE(parsed.has_value());
    return parsed.error().code;
}

}  // namespace

TEST_CASE("A repair request is a run request with rounds")
{
    auto parsed = parse_repair_request(R"J({"source": "print(1)", "timeout_s": 3, "image": "stdlib", "rounds": 2})J");
    REQUIRE(parsed.has_value());
    CHECK(parsed->run.request().source == "print(1)");
    CHECK(parsed->run.request().timeout_s == 3);
    CHECK(parsed->rounds == 2);
    CHECK_FALSE(parsed->run.request().files.has_value());
    auto defaults = parse_repair_request(R"J({"source": "x"})J");
    REQUIRE(defaults.has_value());
    CHECK(defaults->rounds == pybox::limits::k_default_repair_rounds);
    auto again = parse_repair_request(serialize_repair_request(*parsed));
    REQUIRE(again.has_value());
    CHECK(again->rounds == 2);
    CHECK(again->run.request().source == "print(1)");
    CHECK(again->run.request().timeout_s == 3);
    CHECK(again->run.request().image == "stdlib");
}

TEST_CASE("A repair request outside its rules is refused with the run request's codes")
{
    CHECK(refusal(R"J({"source": "x", "rounds": 0})J") == "rounds_out_of_range");
    CHECK(refusal(R"J({"source": "x", "rounds": 6})J") == "rounds_out_of_range");
    CHECK(refusal(R"J({"source": "x", "rounds": 2.5})J") == "rounds_out_of_range");
    CHECK(refusal(R"J({"source": "x", "rounds": "3"})J") == "rounds_out_of_range");
    CHECK(refusal(R"J({"source": "x", "files": {"outputs": true}})J") == "invalid_request");
    CHECK(refusal(R"J({"source": "x", "rounds": 2, "rounds": 3})J") == "invalid_request");
    CHECK(refusal(R"J({"rounds": 2})J") == "invalid_request");
    CHECK(refusal(R"J({"source": "x", "timeout_s": 99})J") == "timeout_out_of_range");
    CHECK(refusal(R"J({"source": "x", "image": "Not an image!"})J") == "unknown_image");
    CHECK(refusal(R"J([1])J") == "invalid_request");
    CHECK(refusal("{") == "invalid_json");
}

TEST_CASE("A repair record reads back as it was written, strictly; unknown names only tolerantly")
{
    RepairRecord record;
    record.rounds_allowed = 3;
    record.original_sha256 = std::string(64, 'e');
    RepairStep original;
    original.receipt = pybox::test::sample_receipt();
    original.program_sha256 = record.original_sha256;
    original.outcome = StepOutcome::failed;
    original.detail = "It exited with code 1.";
    RepairStep fixed;
    fixed.step = 1;
    fixed.model_call = ModelCall{"test/model", 120, 30, 1.25, 2, "stop"};
    fixed.program = "print('ok')\n";
    fixed.program_sha256 = std::string(64, 'f');
    fixed.receipt = pybox::test::sample_receipt();
    fixed.outcome = StepOutcome::succeeded;
    fixed.detail = "It exited with code 0.";
    RepairStep failed_call;
    failed_call.step = 2;
    failed_call.outcome = StepOutcome::model_failed;
    failed_call.error = StepError{"model_timeout", "No answer within 120 s."};
    record.steps = {original, fixed, failed_call};
    record.stop_reason = StopReason::fixed;
    record.final_step = 1;

    const auto document = to_json(record);
    auto strict = repair_record_from_json(document, ReadMode::strict);
    REQUIRE(strict.has_value());
    CHECK(*strict == record);

    auto newer = document;
    newer.as_object()["stop_reason"] = "outlived";
    newer.as_object()["new_key"] = 1;
    CHECK_FALSE(repair_record_from_json(newer, ReadMode::strict).has_value());
    auto tolerant = repair_record_from_json(newer, ReadMode::tolerant);
    REQUIRE(tolerant.has_value());
    CHECK(tolerant->stop_reason == StopReason::unrecognized);

    auto wrong = document;
    wrong.as_object()["final_step"] = 7;
    CHECK_FALSE(repair_record_from_json(wrong, ReadMode::tolerant).has_value());
    auto bad_receipt = document;
    bad_receipt.as_object()["steps"].as_array()[0].as_object()["receipt"] = boost::json::object{{"x", 1}};
    CHECK_FALSE(repair_record_from_json(bad_receipt, ReadMode::tolerant).has_value());
}
