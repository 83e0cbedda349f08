// The registry code against real engines and Debian's docker-registry (tests/registry/): the
// suite's stdlib image pushed from the private engine and pulled by digest into engine2, where a
// Python program runs from it; a second push that sends no blob; and the registry's storage
// tampered with, which the pull and its check refuse, leaving nothing under the reference; and a
// second pyboxd whose config.json names a pinned stdlib image, which `pybox setup` pulls and
// checks instead of building (macOS's way to the seed's image).
// Needs the fixtures engine (PYBOX_HOME), engine2 (PYBOX_ENGINE2_DIR) and registry
// (PYBOX_REGISTRY_DIR). Prints the push and pull times of the stdlib image.
#include "daemon/engine/engine_client.hpp"
#include "daemon/registry/image_pull.hpp"
#include "daemon/registry/image_push.hpp"
#include "tests/integration/harness.hpp"

#include "common/api_error_codes.hpp"
#include "common/files.hpp"
#include "common/sha256.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

namespace {

namespace fs = std::filesystem;
namespace api_error = pybox::api_error;
using namespace pybox::registry;
using pybox::engine::EngineClient;
using pybox::test::SideDaemon;
using Clock = std::chrono::steady_clock;

const pybox::engine::Timeout k_call{30'000};

std::string env(const char* name)
{
    const char* value = std::getenv(name);
    REQUIRE(value != nullptr);
    return value;
}

std::map<std::string, std::string> registry_env()
{
    std::map<std::string, std::string> values;
    std::ifstream file(env("PYBOX_REGISTRY_DIR") + "/registry.env");
    REQUIRE(file.good());
    for (std::string line; std::getline(file, line);)
        if (const auto eq = line.find('='); eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
    return values;
}

// The stdlib image the engine fixture's `pybox setup` recorded.
std::string stdlib_image_id()
{
    const auto text = pybox::read_file_capped(fs::path(env("PYBOX_HOME")) / "images.json", 1 << 20);
    REQUIRE(text.has_value());
    const auto images = boost::json::parse(*text);
    for (const auto& image : images.at("images").as_array()) {
        if (image.at("name").as_string() == "stdlib") return std::string(image.at("image_id").as_string());
    }
    FAIL("images.json records no stdlib image");
    return {};
}

double seconds_since(Clock::time_point begun) { return std::chrono::duration<double>(Clock::now() - begun).count(); }

template <class Make>
auto run(boost::asio::io_context& io, Make make)
{
    auto done = boost::asio::co_spawn(io, make(), boost::asio::use_future);
    io.restart();
    io.run();
    return done.get();
}

// What the command printed on stdout, and its exit status.
std::pair<std::string, int> command_output(const std::string& command)
{
    std::string output;
    FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::array<char, 4096> chunk{};
    for (std::size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0;) output.append(chunk.data(), n);
    return {output, ::pclose(pipe)};
}

// A blob's file in the registry's filesystem storage.
fs::path blob_file(const std::string& storage, const std::string& digest)
{
    const std::string hex = digest.substr(7);
    return fs::path(storage) / "docker/registry/v2/blobs/sha256" / hex.substr(0, 2) / hex / "data";
}

// Replaces a file's bytes for one test and puts the original back afterwards.
class TamperedFile {
public:
    TamperedFile(fs::path path, const std::function<void(std::string&)>& change) : m_path(std::move(path))
    {
        auto original = pybox::read_file_capped(m_path, std::size_t{1} << 31);
        REQUIRE(original.has_value());
        m_original = std::move(*original);
        std::string changed = m_original;
        change(changed);
        REQUIRE(changed != m_original);
        write(changed);
    }
    ~TamperedFile() { write(m_original); }
    TamperedFile(const TamperedFile&) = delete;
    TamperedFile& operator=(const TamperedFile&) = delete;

private:
    void write(const std::string& bytes) const
    {
        std::ofstream out(m_path, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    fs::path m_path;
    std::string m_original;
};

struct Setup {
    boost::asio::io_context io;
    EngineClient engine{io.get_executor(),
                        pybox::engine::make_unix_socket_dialer(io.get_executor(), fs::path(env("PYBOX_HOME")) / "engine/docker.sock")};
    EngineClient engine2{io.get_executor(),
                         pybox::engine::make_unix_socket_dialer(io.get_executor(), fs::path(env("PYBOX_ENGINE2_DIR")) / "docker.sock")};
    std::map<std::string, std::string> registry = registry_env();
    RegistryAddress address = parse_registry_address(registry.at("ADDRESS") + "/pybox").value();
    std::string image_id = stdlib_image_id();
    fs::path work_dir = fs::path(env("PYBOX_REGISTRY_DIR")) / "work";

    Setup()
    {
        REQUIRE(run(io, [&]() { return engine.ping(k_call); }).has_value());
        REQUIRE(run(io, [&]() { return engine2.ping(k_call); }).has_value());
    }

    PushedImage push(const std::string& name)
    {
        auto pushed = run(io, [&]() { return push_image(engine, address, name, image_id, work_dir); });
        INFO((pushed ? std::string() : pushed.error().code + ": " + pushed.error().message));
        REQUIRE(pushed.has_value());
        return *pushed;
    }

    pybox::Expected<PulledImage> pull(const PinnedReference& reference, std::optional<std::string> expected)
    {
        return run(io, [&]() { return pull_pinned_image(engine2, reference, expected, k_pull_timeout); });
    }

    // engine2 forgets the image whole, so that a pull fetches every blob again.
    void forget_image_on_engine2()
    {
        REQUIRE(run(io, [&]() { return engine2.remove_image(image_id, k_call); }).has_value());
        CHECK(run(io, [&]() { return engine2.inspect_image(image_id, k_call); }).error().code ==
              api_error::k_engine_no_such_object);
    }

    bool engine2_holds(const PinnedReference& reference)
    {
        const std::string text = reference.text();
        return run(io, [&]() { return engine2.inspect_image(text, k_call); }).has_value();
    }
};

}  // namespace

TEST_CASE("The stdlib image pushed from the private engine is pulled by digest into a second engine as the same image, and Python runs from it")
{
    Setup setup;
    setup.forget_image_on_engine2();
    const auto pushed_at = Clock::now();
    const auto pushed = setup.push("stdlib");
    const double push_seconds = seconds_since(pushed_at);
    CHECK(pushed.image_id == setup.image_id);
    CHECK(pushed.reference.text() == setup.address.host.authority() + "/pybox/stdlib@" + pushed.reference.digest);

    const auto pulled_at = Clock::now();
    const auto pulled = setup.pull(pushed.reference, setup.image_id);
    const double pull_seconds = seconds_since(pulled_at);
    INFO((pulled ? std::string() : pulled.error().code + ": " + pulled.error().message));
    REQUIRE(pulled.has_value());
    CHECK(pulled->image_id == setup.image_id);
    CHECK(pulled->reference == pushed.reference.text());
    std::cout << "registry: stdlib image " << pushed.bytes_uploaded << " bytes in " << pushed.blobs_uploaded
              << " blobs, pushed in " << push_seconds << " s, pulled by digest into engine2 in " << pull_seconds << " s\n";

    const auto [output, status] = command_output("docker -H unix://" + env("PYBOX_ENGINE2_DIR") +
                                                  "/docker.sock run --rm --network none " + pushed.reference.text() +
                                                  " python3 -c 'print(6*7)'");
    CHECK(status == 0);
    CHECK(output == "42\n");
    // Pulled by digest: the engine holds no tag of it.
    const std::string reference = pushed.reference.text();
    const auto inspected = run(setup.io, [&]() { return setup.engine2.inspect_image(reference, k_call); });
    REQUIRE(inspected.has_value());
    CHECK(inspected->raw.at("RepoTags").as_array().empty());
}

TEST_CASE("A second push of the same image uploads no blob and names the same manifest digest")
{
    Setup setup;
    const auto first = setup.push("stdlib-twice");
    const auto second = setup.push("stdlib-twice");
    CHECK(second.blobs_uploaded == 0);
    CHECK(second.bytes_uploaded == 0);
    CHECK(second.blobs_present == first.blobs_uploaded + first.blobs_present);
    CHECK(second.reference == first.reference);
}

TEST_CASE("A manifest the registry serves changed under its digest is refused as a tampered or wrong digest, and nothing is left under the reference")
{
    Setup setup;
    const auto pushed = setup.push("stdlib-tampered-manifest");
    const TamperedFile tampered(blob_file(setup.registry.at("STORAGE"), pushed.reference.digest), [](std::string& bytes) {
        bytes.insert(bytes.size() - 1, " ");  // the same manifest, one byte longer: another digest
    });
    const auto pulled = setup.pull(pushed.reference, setup.image_id);
    REQUIRE_FALSE(pulled.has_value());
    CHECK(pulled.error().code == api_error::k_image_digest_mismatch);
    CHECK_THAT(pulled.error().message, Catch::Contains("tampered or wrong digest") && Catch::Contains("manifest verification failed"));
    CHECK_FALSE(setup.engine2_holds(pushed.reference));
}

TEST_CASE("A layer corrupted in the registry's storage is refused as a tampered or wrong digest, and nothing is left under the reference")
{
    Setup setup;
    const auto pushed = setup.push("stdlib-tampered-layer");
    setup.forget_image_on_engine2();
    const auto manifest = pybox::read_file_capped(blob_file(setup.registry.at("STORAGE"), pushed.reference.digest), 1 << 20);
    REQUIRE(manifest.has_value());
    const std::string layer = std::string(boost::json::parse(*manifest).at("layers").at(0).at("digest").as_string());
    const TamperedFile tampered(blob_file(setup.registry.at("STORAGE"), layer), [](std::string& bytes) { bytes[bytes.size() / 2] ^= 1; });
    const auto pulled = setup.pull(pushed.reference, setup.image_id);
    REQUIRE_FALSE(pulled.has_value());
    CHECK(pulled.error().code == api_error::k_image_digest_mismatch);
    CHECK_THAT(pulled.error().message, Catch::Contains("filesystem layer verification failed"));
    CHECK_FALSE(setup.engine2_holds(pushed.reference));
}

TEST_CASE("An image pulled by a digest that names another image than the record says is refused and removed")
{
    Setup setup;
    const auto pushed = setup.push("stdlib-wrong-record");
    const std::string recorded = "sha256:" + std::string(64, '0');
    const auto pulled = setup.pull(pushed.reference, recorded);
    REQUIRE_FALSE(pulled.has_value());
    CHECK(pulled.error().code == api_error::k_image_digest_mismatch);
    CHECK_THAT(pulled.error().message, Catch::Contains("the record says " + recorded));
    CHECK_FALSE(setup.engine2_holds(pushed.reference));
}

TEST_CASE("pybox setup takes the stdlib image by the pinned digest config.json names (macOS's way), checks it, and runs from it")
{
    Setup setup;
    const auto pushed = setup.push("stdlib-seed");
    const std::string reference = pushed.reference.text();
    // A daemon of its own on the suite's engine, with the suite's records (the built stdlib image).
    const SideDaemon daemon("pinned-stdlib", {{"stdlib_image", reference}, {"warm_boxes", 0}});
    const auto taken = daemon.pybox({"setup", "--image", "stdlib", "--quiet"});
    INFO(taken.output << taken.error_output);
    REQUIRE(taken.exit_code == 0);
    CHECK_THAT(taken.output, Catch::StartsWith("stdlib: pulled by its pinned digest in ") &&
                                 Catch::EndsWith(" s (" + setup.image_id + ")\n"));  // the same bytes: the same image
    const auto records = pybox::read_file_capped(daemon.home() / "images.json", 1 << 20);
    REQUIRE(records.has_value());
    const auto recorded = boost::json::parse(*records);
    boost::json::object record;
    for (const auto& image : recorded.at("images").as_array())
        if (image.at("name").as_string() == "stdlib") record = image.as_object();
    REQUIRE_FALSE(record.empty());
    CHECK(record.at("image_id").as_string() == setup.image_id);
    CHECK(record.at("tar_sha256").as_string() == pushed.reference.digest.substr(7));
    const auto recipe = pybox::read_file_capped(daemon.home() / "recipes/stdlib.lock", 4096);
    REQUIRE(recipe.has_value());
    CHECK_THAT(*recipe, Catch::Contains("reference=" + reference));
    CHECK(record.at("recipe_sha256").as_string() == pybox::sha256_hex(*recipe));

    const auto again = daemon.pybox({"setup", "--image", "stdlib", "--quiet"});
    REQUIRE(again.exit_code == 0);
    CHECK(again.output == "stdlib: up to date (" + setup.image_id + ")\n");

    const auto ran = daemon.run_json("print(6*7)");
    CHECK(ran.process.exit_code == 0);
    CHECK(ran.receipt.at("capture").at("stdout") == "42\n");
    CHECK(ran.receipt.at("identity").at("image_id").as_string() == setup.image_id);
    CHECK(ran.receipt.at("identity").at("recipe_sha256").as_string() == record.at("recipe_sha256").as_string());
}

TEST_CASE("pybox setup refuses a pinned stdlib image whose registry serves other bytes, and records nothing")
{
    Setup setup;
    const auto pushed = setup.push("stdlib-seed-tampered");
    const TamperedFile tampered(blob_file(setup.registry.at("STORAGE"), pushed.reference.digest),
                                [](std::string& bytes) { bytes.insert(bytes.size() - 1, " "); });
    const SideDaemon daemon("pinned-stdlib-tampered", {{"stdlib_image", pushed.reference.text()}, {"warm_boxes", 0}});
    const auto records_before = pybox::read_file_capped(daemon.home() / "images.json", 1 << 20);
    REQUIRE(records_before.has_value());
    const auto refused = daemon.pybox({"setup", "--image", "stdlib", "--quiet"});
    INFO(refused.output << refused.error_output);
    CHECK(refused.exit_code != 0);
    CHECK_THAT(refused.error_output, Catch::Contains("tampered or wrong digest"));
    const auto records_after = pybox::read_file_capped(daemon.home() / "images.json", 1 << 20);
    REQUIRE(records_after.has_value());
    CHECK(*records_after == *records_before);
    const std::string reference = pushed.reference.text();
    CHECK_FALSE(run(setup.io, [&]() { return setup.engine.inspect_image(reference, k_call); }).has_value());
}
