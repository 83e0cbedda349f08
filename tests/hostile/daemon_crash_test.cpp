// docs/hostile.md case 37: pyboxd is killed (SIGKILL) mid-run, then started again. The client
// says the program may have run and how to look it up; the restarted daemon's sweep removes the
// box and settles the run in the attempt journal, which `pybox attempts` shows. A side daemon
// with short sweep times (config.json) keeps this to seconds.
#include "tests/hostile/hostile.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <thread>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

json::value attempts_answer(const SideDaemon& daemon)
{
    const auto listed = daemon.pybox({"attempts", "--json"});
    INFO("stderr: " << listed.error_output);
    REQUIRE(listed.exit_code == 0);
    return json::parse(listed.output);
}

}  // namespace

// docs/hostile.md case 37
TEST_CASE("pyboxd killed mid-run: the client says the program may have run; after a restart the sweep removes "
          "the box and journals the run")
{
    SideDaemon daemon("crash", json::object{{"box_expiry_s", 2}, {"settle_after_expiry_s", 1}, {"sweep_interval_s", 1}});
    auto client = std::async(std::launch::async, [&daemon] {
        return daemon.try_pybox({"exec", "-", "--timeout", "25"}, "import time\ntime.sleep(20)\nprint('done')\n");
    });
    std::vector<std::string> boxes;
    REQUIRE(within(15s, [&] { return !(boxes = labelled_boxes(daemon.home())).empty(); }));
    REQUIRE(boxes.size() == 1);
    std::this_thread::sleep_for(1500ms);  // the box is started and the program sleeping
    // The run is in progress: its note is listed, and the sweep has left its box alone.
    const auto during = attempts_answer(daemon);
    REQUIRE(during.at("unsettled").as_array().size() == 1);
    CHECK(during.at("unsettled").as_array()[0].at("in_progress") == true);
    const std::string run_id(during.at("unsettled").as_array()[0].at("run_id").as_string());

    daemon.kill_hard();
    const auto lost = client.get();
    REQUIRE(lost.has_value());
    CHECK(lost->exit_code == 125);
    CHECK(lost->output.empty());
    CHECK_THAT(lost->error_output, Catch::Contains("pyboxd went away after it took the request"));
    CHECK_THAT(lost->error_output, Catch::Contains("The program may have run"));
    CHECK_THAT(lost->error_output, Catch::Contains("pybox attempts"));
    CHECK(labelled_boxes(daemon.home()) == boxes);  // nobody removed the box yet

    daemon.restart();
    REQUIRE(within(20s, [&] { return labelled_boxes(daemon.home()).empty(); }));
    json::value settled_answer;
    REQUIRE(within(20s, [&] {
        settled_answer = attempts_answer(daemon);
        return !settled_answer.at("settled").as_array().empty();
    }));
    CHECK(settled_answer.at("unsettled").as_array().empty());
    CHECK(settled_answer.at("damaged_lines") == 0);
    REQUIRE(settled_answer.at("settled").as_array().size() == 1);
    const auto& entry = settled_answer.at("settled").as_array()[0];
    CHECK(entry.at("run_id") == json::value(run_id));
    CHECK(entry.at("container_id") == json::value(boxes[0]));
    CHECK(entry.at("box") == "REMOVED_BY_SWEEP");
    CHECK(entry.at("box_removed_at").is_string());
    CHECK(entry.at("run_parent_released") == true);
    CHECK(entry.at("errors").as_array().empty());

    const auto shown = daemon.pybox({"attempts"});
    CHECK(shown.exit_code == 0);
    CHECK_THAT(shown.output, Catch::Contains(run_id + "  started ") && Catch::Contains("box REMOVED_BY_SWEEP at "));

    // The restarted daemon runs programs as before.
    const auto after = daemon.run_json("print('back')\n");
    CHECK(after.process.exit_code == 0);
    CHECK(after.receipt.at("cleanup").at("status") == "REMOVED");
}
