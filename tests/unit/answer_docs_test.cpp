// docs/api.md's tables of answer keys against what the daemon writes (proto::to_json of each
// answer with every optional key set): the same keys, both ways. Keys of the objects inside an
// array are written "key[].sub".
#include "proto/answers.hpp"
#include "proto/repair.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/sample_answers.hpp"
#include "tests/support/sample_receipt.hpp"
#include "tests/support/source_text.hpp"
#include "tests/support/valid_request.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <set>
#include <string>

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using Keys = std::set<std::string>;
using namespace pybox::proto;

// The first column of the first table after `heading`, then after `marker` within its section.
Keys documented_keys(const std::string& heading, const std::string& marker = "")
{
    static const std::string doc = pybox::test::read_text(pybox::test::source_dir() / "docs" / "api.md");
    const auto start = doc.find("\n" + heading + "\n");
    REQUIRE(start != std::string::npos);
    const auto from = doc.find(marker, start);
    REQUIRE(from != std::string::npos);
    const auto table = doc.find("\n|", from);
    REQUIRE(table != std::string::npos);
    const auto end = doc.find("\n\n", table);
    const std::string rows = doc.substr(table, end - table);
    static const std::regex row_pattern(R"(\n\| `([a-z0-9_\[\].]+)` \|)");
    Keys keys;
    for (std::sregex_iterator it(rows.begin(), rows.end(), row_pattern), stop; it != stop; ++it)
        keys.insert((*it)[1].str());
    return keys;
}

Keys written_keys(const json::value& answer)
{
    Keys keys;
    for (const auto& [key, value] : answer.as_object()) {
        keys.emplace(key);
        if (value.is_array())
            for (const auto& item : value.as_array())
                if (item.is_object())
                    for (const auto& [sub, ignored] : item.as_object()) keys.insert(std::string(key) + "[]." + std::string(sub));
    }
    return keys;
}

Keys joined(Keys first, const Keys& second)
{
    first.insert(second.begin(), second.end());
    return first;
}

}  // namespace

TEST_CASE("docs/api.md lists exactly the keys of every answer the daemon writes")
{
    const auto start = pybox::test::sample_pool_start();
    const Keys status = documented_keys("### `GET /v1/vm/status`");
    CHECK(documented_keys("### `GET /v1/ping`") == written_keys(to_json(PingAnswer{true, "pyboxd", "0.1.0", "v1"})));
    CHECK(status == written_keys(to_json(static_cast<const EngineStatus&>(start))));
    CHECK(joined(status, documented_keys("### `POST /v1/vm/start`, `POST /v1/vm/stop`", "Start answers")) ==
          written_keys(to_json(start)));
    CHECK(documented_keys("### `POST /v1/vm/start`, `POST /v1/vm/stop`", "Stop answers") ==
          written_keys(to_json(EngineStopAnswer{false, true, false, "/s", 0.4, {"note"}})));
    CHECK(documented_keys("### `POST /v1/setup`") == written_keys(to_json(pybox::test::sample_setup())));
    CHECK(documented_keys("### `GET /v1/images`") == written_keys(to_json(pybox::test::sample_images())));
    CHECK(documented_keys("### `GET /v1/attempts`") == written_keys(to_json(pybox::test::sample_attempts())));
    CHECK(documented_keys("### `GET /v1/doctor`") == written_keys(to_json(pybox::test::sample_doctor())));
    CHECK(documented_keys("### `GET /v1/receipts`, `GET /v1/receipts/RUN_ID`") ==
          written_keys(to_json(pybox::test::sample_receipts())));
}

TEST_CASE("docs/api.md lists exactly the keys of a repair request and of the repair record")
{
    const RepairRequest request{pybox::test::valid_request("print(1)"), 3};
    CHECK(documented_keys("### `POST /v1/repair`") == written_keys(boost::json::parse(serialize_repair_request(request))));

    RepairStep step;
    step.model_call = ModelCall{"m", 1, 2, 0.5, 1, "stop"};
    step.program = "print(1)\n";
    step.receipt = pybox::test::sample_receipt();
    step.receipt_not_kept = "pyboxd signed the receipt of run 1 but could not keep it: full.";
    step.error = StepError{"busy", "full"};
    RepairRecord record;
    record.steps = {step};
    record.final_step = 0;
    Keys documented = documented_keys("### `POST /v1/repair`", "the repair record:");
    for (const auto& key : documented_keys("### `POST /v1/repair`", "A step:")) documented.insert("steps[]." + key);
    CHECK(documented == written_keys(to_json(record)));
}
