// Own images (`pybox image build|ls|rm`) against the real engine: one image built from a recipe
// that adds python3-six to stdlib, used, tampered with, and removed.
#include "tests/integration/harness.hpp"

#include "common/files.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <iostream>

using namespace pybox;
using namespace pybox::test;

namespace {

constexpr const char* k_image = "itest-six";
constexpr const char* k_program = "import six\nprint(six.__name__, six.PY3)\n";

std::filesystem::path write_recipe(const std::string& name, const std::string& text)
{
    const std::filesystem::path file = runtime_home().string() + "-" + name + ".recipe";
    REQUIRE(write_file_atomic(file, text, 0600).has_value());
    return file;
}

// A run that the daemon refuses before creating anything, with `words` in its message.
void expect_run_refused(const std::string& words)
{
    const auto before = labelled_boxes().size();
    const auto run = run_pybox({"exec", "-", "--image", k_image}, k_program);
    INFO("stderr: " << run.error_output);
    CHECK(run.exit_code == 125);
    CHECK(run.output.empty());
    CHECK(run.error_output.find(words) != std::string::npos);
    CHECK(labelled_boxes().size() == before);
}

// Replaces a file's text for the duration of one check, then puts it back.
void with_file_changed(const std::filesystem::path& file, const std::string& from, const std::string& to,
                       const std::function<void()>& check)
{
    auto original = read_file_capped(file, 1 << 20);
    REQUIRE(original.has_value());
    const auto at = original->find(from);
    REQUIRE(at != std::string::npos);
    std::string changed = *original;
    changed.replace(at, from.size(), to);
    REQUIRE(write_file_atomic(file, changed, 0600).has_value());
    check();
    REQUIRE(write_file_atomic(file, *original, 0600).has_value());
}

}  // namespace

TEST_CASE("Own image names and recipes are checked before anything is built", "[own-image]")
{
    const auto recipe = write_recipe("good", "format=1\nbase=stdlib\ninclude=python3-six\n");
    for (const auto* name : {"stdlib", "data", "Bad_Name", "../x"}) {
        const auto build = run_pybox({"image", "build", name, "--recipe", recipe.string()});
        INFO(name << ": " << build.error_output);
        CHECK(build.exit_code == 125);
        CHECK(build.error_output.find(std::string(name) == "stdlib" || std::string(name) == "data"
                                          ? "built-in image"
                                          : "lower-case letter") != std::string::npos);
    }
    // A recipe folder in the daemon's recipes_dir makes a built-in image, whatever its name.
    const std::filesystem::path builtin = runtime_home().string() + "-recipes/itest-builtin";
    std::filesystem::create_directories(builtin);
    REQUIRE(write_file_atomic(builtin / "recipe", "format=1\n", 0644).has_value());
    const auto shadowing = run_pybox({"image", "build", "itest-builtin", "--recipe", recipe.string()});
    const auto shadow_removal = run_pybox({"image", "rm", "itest-builtin"});
    std::filesystem::remove_all(builtin);
    CHECK(shadowing.exit_code == 125);
    CHECK(shadowing.error_output.find("it is a built-in image") != std::string::npos);
    CHECK(shadow_removal.error_output.find("it is a built-in image") != std::string::npos);

    const auto bad = write_recipe("bad", "format=1\nbase=stdlib\nsource=http://evil.example/ x main\n");
    const auto refused = run_pybox({"image", "build", "itest-bad", "--recipe", bad.string()});
    CHECK(refused.exit_code == 125);
    CHECK(refused.error_output.find("unknown key \"source\"") != std::string::npos);
    const auto removal = run_pybox({"image", "rm", "itest-never-built"});
    CHECK(removal.exit_code == 125);
    CHECK(removal.error_output.find("no own image named itest-never-built") != std::string::npos);
    CHECK(run_pybox({"image", "ls"}).output.find("itest-bad") == std::string::npos);
}

TEST_CASE("An own image is built once, runs with the stdlib limits, is checked before every run, and is removed",
          "[own-image]")
{
    const auto recipe = write_recipe("six", "# six on top of stdlib\nformat=1\nbase=stdlib\ninclude=python3-six\n");
    const std::vector<std::string> build_args{"image", "build", k_image, "--recipe", recipe.string()};

    // Two builds at once: one builds, the other is refused as busy (retryable) at once.
    const auto started = std::chrono::steady_clock::now();
    auto first = std::async(std::launch::async, [&] { return try_run_pybox(build_args); });
    auto second = std::async(std::launch::async, [&] { return try_run_pybox(build_args); });
    const auto one = finished(build_args, first.get());
    const auto two = finished(build_args, second.get());
    const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const ProcessResult& built = one.exit_code == 0 ? one : two;
    const ProcessResult& busy = one.exit_code == 0 ? two : one;
    INFO("built: " << built.output << built.error_output << " busy: " << busy.error_output);
    REQUIRE(built.exit_code == 0);
    CHECK(built.output.find(std::string(k_image) + ": built in") != std::string::npos);
    CHECK(busy.exit_code == 125);
    CHECK(busy.error_output.find("retry") != std::string::npos);
    std::cout << "own image build (python3-six on stdlib): " << build_s << " s\n";

    const auto listed = run_pybox({"image", "ls"});
    CHECK(listed.output.find(k_image) != std::string::npos);

    // It runs, with exactly the stdlib image's box settings.
    const auto own = run_json(k_program, {"--image", k_image});
    INFO("stderr: " << own.process.error_output);
    CHECK(own.process.exit_code == 0);
    CHECK(own.receipt.at("capture").at("stdout") == "six True\n");
    const auto plain = run_json(k_program);
    CHECK(plain.process.exit_code == 1);
    // The first process differs only as the run took a warm box or not (lifecycle.warm).
    auto own_configured = own.receipt.at("configured").as_object();
    auto plain_configured = plain.receipt.at("configured").as_object();
    CHECK((own_configured.at("command") == plain_configured.at("command")) ==
          (own.receipt.at("lifecycle").at("warm") == plain.receipt.at("lifecycle").at("warm")));
    own_configured.erase("command");
    plain_configured.erase("command");
    CHECK(own_configured == plain_configured);
    CHECK(own.receipt.at("identity").at("image") == k_image);

    // A changed record is refused before anything is created.
    with_file_changed(runtime_home() / "recipes" / (std::string(k_image) + ".lock"), "python3-six=",
                      "python3-six=9", [] { expect_run_refused("pybox image build itest-six"); });
    auto images = read_file_capped(runtime_home() / "images.json", 1 << 16);
    REQUIRE(images.has_value());
    const auto record_at = images->find(k_image);
    const auto sha_key = images->find("\"recipe_sha256\":\"", record_at);
    REQUIRE(sha_key != std::string::npos);
    const std::string recorded_sha = images->substr(sha_key + 17, 64);
    with_file_changed(runtime_home() / "images.json", recorded_sha, std::string(64, 'a'),
                      [] { expect_run_refused("do not match the recipe SHA-256"); });
    CHECK(run_json(k_program, {"--image", k_image}).process.exit_code == 0);

    // Removed: gone from the list and the engine, and later runs are refused.
    const auto removed = run_pybox({"image", "rm", k_image});
    INFO("rm: " << removed.error_output);
    CHECK(removed.exit_code == 0);
    CHECK(removed.output.find("removed itest-six") != std::string::npos);
    CHECK(removed.output.find("kept") == std::string::npos);
    CHECK_FALSE(std::filesystem::exists(runtime_home() / "recipes" / (std::string(k_image) + ".lock")));
    CHECK(run_pybox({"image", "ls"}).output.find(k_image) == std::string::npos);
    expect_run_refused("not built yet");
}
