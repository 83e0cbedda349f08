// A pool of engines through the real client, daemon and engines: a second pyboxd whose local
// engine is the suite's (its "engine_socket", so no third dockerd is started) and whose
// "engines" name the fixture's second dockerd (engine2). Needs the fixtures engine and engine2
// (ctest's integration_pool); tagged [pool] so the suite's other run leaves it out.
#include "common/files.hpp"
#include "common/process.hpp"
#include "tests/integration/harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

fs::path engine2_socket()
{
    const char* dir = std::getenv("PYBOX_ENGINE2_DIR");
    REQUIRE(dir != nullptr);
    return fs::path(dir) / "docker.sock";
}

fs::path suite_engine_socket() { return runtime_home() / "engine" / "docker.sock"; }

json::object engine_entry(const std::string& id, const fs::path& socket)
{
    return json::object{{"id", id}, {"url", "unix://" + socket.string()}};
}

// The end of a test with a linked engine: the daemon stops first (SIGTERM: it removes its warm
// boxes, the linked engine's through the link), then the link goes, and nothing is left on engine2.
void stop_then_unlink(std::optional<SideDaemon>& daemon, const fs::path& link)
{
    const fs::path home = daemon->home();
    daemon.reset();
    fs::remove(link);
    CHECK(labelled_boxes_on(engine2_socket(), home).empty());
}

// A new link to engine2's socket, for a test to remove and put back: an engine that stops
// answering and comes back, without stopping a dockerd.
fs::path engine2_link(const std::string& name)
{
    const fs::path link = runtime_home().string() + "-pool-" + name + ".sock";
    fs::remove(link);
    fs::create_symlink(engine2_socket(), link);
    return link;
}

// The pool's engines of a status or start answer, by id.
std::map<std::string, json::object> engines_of(const json::value& answer)
{
    std::map<std::string, json::object> engines;
    for (const auto& engine : answer.at("engines").as_array())
        engines[std::string(engine.at("id").as_string())] = engine.as_object();
    return engines;
}

// The image IDs that images.json records for the suite.
std::set<std::string> recorded_image_ids(const fs::path& home)
{
    auto text = read_file_capped(home / "images.json", 1 << 20);
    REQUIRE(text.has_value());
    std::set<std::string> ids;
    const auto document = json::parse(*text);
    const auto& images = document.is_array() ? document.as_array() : document.at("images").as_array();
    for (const auto& image : images) ids.insert(std::string(image.at("image_id").as_string()));
    return ids;
}

bool engine_holds_image(const fs::path& socket, const std::string& image_id)
{
    auto inspected = run_process({"/usr/bin/docker", "-H", "unix://" + socket.string(), "image", "inspect", "--format",
                                  "{{.Id}}", image_id});
    REQUIRE(inspected.has_value());
    return inspected->exit_code == 0 && inspected->output.find(image_id) != std::string::npos;
}

json::value attempts_answer(const SideDaemon& daemon)
{
    const auto listed = daemon.pybox({"attempts", "--json"});
    INFO("stderr: " << listed.error_output);
    REQUIRE(listed.exit_code == 0);
    return json::parse(listed.output);
}

}  // namespace

TEST_CASE("vm start verifies every engine of the pool, copies the images under the same IDs, and status lists them", "[pool]")
{
    SideDaemon daemon("pool", json::object{{"engines", json::array{engine_entry("engine2", engine2_socket())}}});
    const auto started = daemon.pybox({"vm", "start", "--json"});
    INFO(started.error_output);
    REQUIRE(started.exit_code == 0);
    const auto start_answer = answer_of(started);
    CHECK(start_answer.at("verified") == true);
    CHECK(start_answer.at("engine_socket") == json::value(suite_engine_socket().string()));
    auto engines = engines_of(start_answer);
    REQUIRE(engines.size() == 2);
    CHECK(engines["local"].at("verified") == true);
    CHECK(engines["engine2"].at("verified") == true);
    CHECK(engines["engine2"].at("address") == json::value("unix://" + engine2_socket().string()));
    CHECK(start_answer.at("engines").at(0).at("id") == "local");

    for (const auto& id : recorded_image_ids(daemon.home())) {
        CHECK(engine_holds_image(suite_engine_socket(), id));
        CHECK(engine_holds_image(engine2_socket(), id));
    }

    const auto status = daemon.pybox({"vm", "status"});
    CHECK(status.exit_code == 0);
    CHECK_THAT(status.output, Catch::Contains("local  verified") && Catch::Contains("engine2  verified") &&
                                  Catch::Contains(engine2_socket().string()));
    const auto status_answer = answer_of(daemon.pybox({"vm", "status", "--json"}));
    CHECK(engines_of(status_answer).size() == 2);
}

TEST_CASE("Two slow programs started at once run at the same time on the two engines", "[pool]")
{
    SideDaemon daemon("pool", json::object{{"engines", json::array{engine_entry("engine2", engine2_socket())}}});
    REQUIRE(daemon.pybox({"vm", "start"}).exit_code == 0);
    const std::string program = "import time\ntime.sleep(2)\nprint('slept')\n";
    const auto begun = std::chrono::steady_clock::now();
    auto first = std::async(std::launch::async,
                            [&] { return daemon.try_pybox({"exec", "-", "--json", "--timeout", "6"}, program); });
    auto second = std::async(std::launch::async,
                             [&] { return daemon.try_pybox({"exec", "-", "--json", "--timeout", "6"}, program); });
    auto one = first.get();
    auto two = second.get();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
    REQUIRE(one.has_value());
    REQUIRE(two.has_value());
    const auto receipt_one = answer_of(*one);
    const auto receipt_two = answer_of(*two);
    CHECK(receipt_one.at("capture").at("stdout") == "slept\n");
    CHECK(receipt_two.at("capture").at("stdout") == "slept\n");
    const std::set<std::string> engines{std::string(receipt_one.at("engine").at("id").as_string()),
                                        std::string(receipt_two.at("engine").at("id").as_string())};
    CHECK(engines == std::set<std::string>{"local", "engine2"});
    // One after the other would take two sleeps plus two runs' overhead; at once, about one.
    CHECK(wall < 3.9);
    for (const auto* receipt : {&receipt_one, &receipt_two}) {
        // Neither waited for the other's 2 s sleep.
        CHECK(receipt->at("lifecycle").at("timing").at("queued_s").as_double() < 1.5);
        CHECK(receipt->at("cleanup").at("status") == "REMOVED");
        // Both engines run on this kernel, so the local cgroup watcher observes both (COLLECTED,
        // with final_counters_complete false when a counter's final value was missed on this
        // busy machine; never UNKNOWN).
        const auto& resources = receipt->at("observed").at("resources");
        INFO(json::serialize(resources));
        CHECK(resources.at("status") == "COLLECTED");
        CHECK(resources.at("sample_count").as_int64() > 0);
    }
    const auto& on_engine2 = receipt_one.at("engine").at("id") == "engine2" ? receipt_one : receipt_two;
    CHECK_THAT(std::string(on_engine2.at("observed").at("resources").at("host").as_string()),
               Catch::Contains("engine engine2"));
    CHECK(on_engine2.at("engine").at("address") == json::value("unix://" + engine2_socket().string()));
    CHECK(labelled_boxes_on(suite_engine_socket(), daemon.home()).empty());
    CHECK(labelled_boxes_on(engine2_socket(), daemon.home()).empty());
}

TEST_CASE("With local_engine false every run goes to the named engines", "[pool]")
{
    SideDaemon daemon("pool", json::object{{"engines", json::array{engine_entry("engine2", engine2_socket())}},
                                           {"local_engine", false}});
    REQUIRE(daemon.pybox({"vm", "start"}).exit_code == 0);
    const auto status = answer_of(daemon.pybox({"vm", "status", "--json"}));
    CHECK(engines_of(status)["local"].at("takes_runs") == false);
    for (int i = 0; i < 3; ++i) {
        const auto run = daemon.run_json("print(6*7)\n");
        CHECK(run.process.exit_code == 0);
        CHECK(run.receipt.at("engine").at("id") == "engine2");
    }
    CHECK(labelled_boxes_on(engine2_socket(), daemon.home()).empty());
}

TEST_CASE("An engine that stops answering is skipped by later runs and vm status says why", "[pool]")
{
    // "gone" is engine2 reached through a link this test removes and puts back.
    const fs::path link = engine2_link("gone");
    std::optional<SideDaemon> daemon_slot;
    SideDaemon& daemon = daemon_slot.emplace(
        "pool", json::object{{"engines", json::array{engine_entry("gone", link), engine_entry("engine2", engine2_socket())}},
                             {"local_engine", false}});
    REQUIRE(daemon.pybox({"vm", "start"}).exit_code == 0);
    CHECK(daemon.run_json("print(1)\n").receipt.at("engine").at("id") == "gone");  // first in config order

    fs::remove(link);
    for (int i = 0; i < 2; ++i) {
        const auto run = daemon.run_json("print(2)\n");
        CHECK(run.process.exit_code == 0);
        CHECK(run.receipt.at("engine").at("id") == "engine2");
    }
    const auto status = daemon.pybox({"vm", "status", "--json"});
    CHECK(status.exit_code == 1);
    auto engines = engines_of(answer_of(status));
    CHECK(engines["gone"].at("verified") == false);
    REQUIRE_FALSE(engines["gone"].at("problems").as_array().empty());
    CHECK_THAT(std::string(engines["gone"].at("problems").at(0).at("message").as_string()),
               Catch::Contains(link.string()) && Catch::Contains("does not answer"));
    CHECK(engines["engine2"].at("verified") == true);

    fs::create_symlink(engine2_socket(), link);
    CHECK(daemon.pybox({"vm", "status"}).exit_code == 0);
    CHECK(daemon.run_json("print(3)\n").receipt.at("engine").at("id") == "gone");
    stop_then_unlink(daemon_slot, link);
}

TEST_CASE("An engine lost by a run takes runs again once it answers, without vm start or status", "[pool]")
{
    const fs::path link = engine2_link("back");
    std::optional<SideDaemon> daemon_slot;
    SideDaemon& daemon = daemon_slot.emplace(
        "pool", json::object{{"engines", json::array{engine_entry("back", link), engine_entry("engine2", engine2_socket())}},
                             {"local_engine", false},
                             {"sweep_interval_s", 1}});
    REQUIRE(daemon.pybox({"vm", "start"}).exit_code == 0);
    fs::remove(link);
    CHECK(daemon.run_json("print(1)\n").receipt.at("engine").at("id") == "engine2");  // "back" found lost
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    CHECK(daemon.run_json("print(2)\n").receipt.at("engine").at("id") == "engine2");  // re-checked: still lost

    fs::create_symlink(engine2_socket(), link);
    // The daemon's own re-check (every sweep interval, 1 s here) finds it answering again.
    CHECK(within(std::chrono::seconds(15), [&] {
        return daemon.run_json("print(3)\n").receipt.at("engine").at("id") == "back";
    }));
    CHECK_THAT(read_file_capped(daemon.home() / "pyboxd.log", 1 << 20).value(), Catch::Contains("engine back") &&
                                                             Catch::Contains("passes its checks again"));
    stop_then_unlink(daemon_slot, link);
}

TEST_CASE("A box left on another engine by a killed daemon is removed and its run settled by that engine's sweep", "[pool]")
{
    SideDaemon daemon("pool", json::object{{"engines", json::array{engine_entry("engine2", engine2_socket())}},
                                           {"local_engine", false},
                                           {"box_expiry_s", 2},
                                           {"settle_after_expiry_s", 1},
                                           {"sweep_interval_s", 1}});
    REQUIRE(daemon.pybox({"vm", "start"}).exit_code == 0);
    auto client = std::async(std::launch::async, [&daemon] {
        return daemon.try_pybox({"exec", "-", "--timeout", "25"}, "import time\ntime.sleep(20)\n");
    });
    std::vector<std::string> boxes;
    REQUIRE(within(std::chrono::seconds(15), [&] { return !(boxes = labelled_boxes_on(engine2_socket(), daemon.home())).empty(); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const auto during = attempts_answer(daemon);
    REQUIRE(during.at("unsettled").as_array().size() == 1);
    const std::string run_id(during.at("unsettled").as_array()[0].at("run_id").as_string());
    daemon.kill_hard();
    REQUIRE(client.get().has_value());
    CHECK(labelled_boxes_on(engine2_socket(), daemon.home()) == boxes);
    CHECK(labelled_boxes_on(suite_engine_socket(), daemon.home()).empty());

    // The local engine's sweep never settles engine2's note (its box is not on the local
    // engine); engine2's sweep removes the box and then settles the run.
    daemon.restart();
    REQUIRE(within(std::chrono::seconds(20), [&] { return labelled_boxes_on(engine2_socket(), daemon.home()).empty(); }));
    json::value settled;
    REQUIRE(within(std::chrono::seconds(20), [&] {
        settled = attempts_answer(daemon);
        return !settled.at("settled").as_array().empty();
    }));
    CHECK(settled.at("unsettled").as_array().empty());
    REQUIRE(settled.at("settled").as_array().size() == 1);
    const auto& entry = settled.at("settled").as_array()[0];
    CHECK(entry.at("run_id") == json::value(run_id));
    CHECK(entry.at("container_id") == json::value(boxes[0]));
    CHECK(entry.at("box") == "REMOVED_BY_SWEEP");
    CHECK(entry.at("run_parent_released") == true);
    CHECK(daemon.run_json("print('back')\n").receipt.at("engine").at("id") == "engine2");
}

TEST_CASE("An image built through the pool reaches every engine under its ID, runs there, and leaves with image rm", "[pool]")
{
    SideDaemon daemon("pool", json::object{{"engines", json::array{engine_entry("engine2", engine2_socket())}},
                                           {"local_engine", false},
                                           {"recipes_dir", runtime_home().string() + "-recipes"}});
    REQUIRE(daemon.pybox({"vm", "start"}).exit_code == 0);
    const fs::path recipe = daemon.home() / "six.recipe";
    REQUIRE(write_file_atomic(recipe, "format=1\nbase=stdlib\ninclude=python3-six\n", 0600).has_value());
    const auto built = daemon.pybox({"image", "build", "pool-six", "--recipe", recipe.string()});
    INFO(built.output << built.error_output);
    REQUIRE(built.exit_code == 0);

    std::string image_id;
    for (const auto& id : recorded_image_ids(daemon.home()))
        if (!recorded_image_ids(runtime_home()).contains(id)) image_id = id;
    REQUIRE_FALSE(image_id.empty());
    CHECK(engine_holds_image(suite_engine_socket(), image_id));
    CHECK(engine_holds_image(engine2_socket(), image_id));
    CHECK(engines_of(answer_of(daemon.pybox({"vm", "status", "--json"})))["engine2"].at("verified") == true);

    const auto run = daemon.run_json("import six\nprint(six.__name__)\n", {"--image", "pool-six"});
    CHECK(run.process.exit_code == 0);
    CHECK(run.receipt.at("engine").at("id") == "engine2");
    CHECK(run.receipt.at("identity").at("image_id") == json::value(image_id));
    CHECK(run.receipt.at("capture").at("stdout") == "six\n");

    REQUIRE(daemon.pybox({"image", "rm", "pool-six"}).exit_code == 0);
    CHECK_FALSE(engine_holds_image(suite_engine_socket(), image_id));
    CHECK_FALSE(engine_holds_image(engine2_socket(), image_id));
    // Right after deleting an image's layers dockerd can take longer than a check's 2 s to
    // answer /info (the status then says so); it is verified again once it answers.
    json::value after;
    CHECK(within(std::chrono::seconds(60), [&] {
        after = answer_of(daemon.pybox({"vm", "status", "--json"}));
        return engines_of(after)["engine2"].at("verified") == true;
    }));
    INFO(json::serialize(after));
}
