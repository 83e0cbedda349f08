// A cluster engine's record of pushed images (daemon/registry/pushed_images.hpp): the strict
// reading of its file, and put/forget writing it whole, in a runtime folder of the test's own.
#include "daemon/registry/pushed_images.hpp"
#include "tests/support/temp_runtime.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace pybox;
using registry::PushedImages;
using registry::PushedRecord;
namespace fs = std::filesystem;

namespace {

std::string hex_digest(char hex) { return "sha256:" + std::string(64, hex); }

PushedRecord pushed_record_of(const std::string& name, char image_hex, char manifest_hex)
{
    return PushedRecord{name, hex_digest(image_hex), "127.0.0.1:5000/pybox/" + name + "@" + hex_digest(manifest_hex),
                        hex_digest(manifest_hex), "2026-01-01T00:00:00.000000Z"};
}

void put_text(const fs::path& file, const std::string& text)
{
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
}

std::string text_of(const fs::path& file)
{
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// The message of the refusal to read `text`; it names the file.
std::string pushed_damage_of(const std::string& text)
{
    const fs::path file = "/home/u/.pybox/runtime/pushed-images/cluster.json";
    const auto records = registry::parse_pushed_images(text, file);
    REQUIRE_FALSE(records.has_value());
    CHECK(records.error().code == "pushed_images_invalid");
    CHECK_THAT(records.error().message, Catch::StartsWith(file.string() + " is damaged ("));
    return records.error().message;
}

std::string pushed_file_with(const std::string& record_members)
{
    return R"({"schema_version": 1, "pushed": [{)" + record_members + "}]}";
}

std::string pushed_members_of(const PushedRecord& record)
{
    return R"("image_name": ")" + record.image_name + R"(", "image_id": ")" + record.image_id + R"(", "reference": ")" +
           record.reference + R"(", "manifest_digest": ")" + record.manifest_digest + R"(", "pushed_at": ")" +
           record.pushed_at + "\"";
}

}  // namespace

TEST_CASE("Each cluster engine's record of pushed images is a file of its own in the runtime folder")
{
    const RuntimePaths paths("/home/u/.pybox/runtime");
    CHECK(paths.pushed_images_file("lab-cluster") == "/home/u/.pybox/runtime/pushed-images/lab-cluster.json");
}

TEST_CASE("A missing record of pushed images is an empty one, and its folder is made when it is first written")
{
    test::TempRuntime runtime;
    const auto file = runtime.paths.pushed_images_file("cluster");
    auto pushed = PushedImages::load(file);
    REQUIRE(pushed.has_value());
    CHECK(pushed->records().empty());
    CHECK_FALSE(pushed->find(hex_digest('c')));
    CHECK_FALSE(fs::exists(file.parent_path()));

    REQUIRE(pushed->put(pushed_record_of("stdlib", 'c', 'a')).has_value());
    CHECK((fs::status(file.parent_path()).permissions() & fs::perms::all) == fs::perms::owner_all);
    CHECK((fs::status(file).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("A put record is found by its image id, and read back from the file as it was put")
{
    test::TempRuntime runtime;
    const auto file = runtime.paths.pushed_images_file("cluster");
    auto pushed = PushedImages::load(file).value();
    const auto stdlib = pushed_record_of("stdlib", 'c', 'a');
    const auto data = pushed_record_of("data", 'd', 'b');
    REQUIRE(pushed.put(stdlib).has_value());
    REQUIRE(pushed.put(data).has_value());
    CHECK(pushed.find(hex_digest('c')) == stdlib);
    CHECK(pushed.find(hex_digest('d')) == data);

    const auto again = PushedImages::load(file);
    REQUIRE(again.has_value());
    CHECK(again->records() == std::vector<PushedRecord>{stdlib, data});
    CHECK(again->file() == file);
}

TEST_CASE("Putting an image id again replaces its record; forgetting one removes it from the file")
{
    test::TempRuntime runtime;
    const auto file = runtime.paths.pushed_images_file("cluster");
    auto pushed = PushedImages::load(file).value();
    REQUIRE(pushed.put(pushed_record_of("stdlib", 'c', 'a')).has_value());
    REQUIRE(pushed.put(pushed_record_of("data", 'd', 'b')).has_value());
    auto repushed = pushed_record_of("stdlib", 'c', 'e');
    repushed.pushed_at = "2026-02-01T00:00:00Z";
    REQUIRE(pushed.put(repushed).has_value());
    CHECK(pushed.records().size() == 2);
    CHECK(pushed.find(hex_digest('c')) == repushed);

    REQUIRE(pushed.forget(hex_digest('c')).has_value());
    CHECK_FALSE(pushed.find(hex_digest('c')));
    CHECK(PushedImages::load(file).value().records() == std::vector<PushedRecord>{pushed_record_of("data", 'd', 'b')});
    // Forgetting an image that is not recorded changes nothing.
    const auto before = text_of(file);
    REQUIRE(pushed.forget(hex_digest('f')).has_value());
    CHECK(text_of(file) == before);
}

TEST_CASE("A record the file could not hold is not put, and nothing changes")
{
    test::TempRuntime runtime;
    const auto file = runtime.paths.pushed_images_file("cluster");
    auto pushed = PushedImages::load(file).value();
    REQUIRE(pushed.put(pushed_record_of("stdlib", 'c', 'a')).has_value());
    const auto before = text_of(file);

    auto wrong_digest = pushed_record_of("data", 'd', 'b');
    wrong_digest.manifest_digest = hex_digest('e');
    auto tagged = pushed_record_of("data", 'd', 'b');
    tagged.reference = "127.0.0.1:5000/pybox/data:latest";
    auto hub = pushed_record_of("python", 'd', 'b');
    hub.reference = "python@" + hex_digest('b');
    auto other_name = pushed_record_of("data", 'd', 'b');
    other_name.image_name = "stdlib";
    auto bad_id = pushed_record_of("data", 'd', 'b');
    bad_id.image_id = "sha256:" + std::string(64, 'D');
    auto local_time = pushed_record_of("data", 'd', 'b');
    local_time.pushed_at = "2026-01-01T00:00:00+01:00";
    for (const auto& bad : {wrong_digest, tagged, hub, other_name, bad_id, local_time}) {
        INFO(bad.reference << " " << bad.image_name << " " << bad.pushed_at);
        const auto put = pushed.put(bad);
        REQUIRE_FALSE(put.has_value());
        CHECK(put.error().code == "pushed_images_invalid");
        CHECK_THAT(put.error().message, Catch::StartsWith("Not written to " + file.string()));
    }
    CHECK(pushed.records().size() == 1);
    CHECK(text_of(file) == before);
}

TEST_CASE("A full record of pushed images takes no new image, but still replaces a recorded one")
{
    test::TempRuntime runtime;
    const auto file = runtime.paths.pushed_images_file("cluster");
    std::vector<PushedRecord> records;
    for (std::size_t i = 0; i < registry::k_max_pushed_records; ++i) {
        char hex[3];
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(i));
        const std::string id = "sha256:" + std::string(62, 'c') + hex;
        records.push_back(PushedRecord{"image" + std::to_string(i), id,
                                       "127.0.0.1:5000/pybox/image" + std::to_string(i) + "@" + hex_digest('a'), hex_digest('a'),
                                       "2026-01-01T00:00:00Z"});
    }
    put_text(file, registry::serialize_pushed_images(records));
    auto pushed = PushedImages::load(file).value();
    CHECK(pushed.records().size() == registry::k_max_pushed_records);
    const auto refused = pushed.put(pushed_record_of("stdlib", 'f', 'b'));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == "pushed_images_full");
    auto again = records.front();
    again.pushed_at = "2026-03-01T00:00:00Z";
    CHECK(pushed.put(again).has_value());
}

TEST_CASE("A record of pushed images that cannot be written leaves the one in memory as it was")
{
    test::TempRuntime runtime;
    const auto file = runtime.paths.pushed_images_file("cluster");
    auto pushed = PushedImages::load(file).value();
    REQUIRE(pushed.put(pushed_record_of("stdlib", 'c', 'a')).has_value());
    // Its folder replaced by a file (root writes into a read-only folder, so a mode would not do).
    fs::remove_all(file.parent_path());
    put_text(file.parent_path().parent_path() / "pushed-images", "");
    const auto put = pushed.put(pushed_record_of("data", 'd', 'b'));
    REQUIRE_FALSE(put.has_value());
    CHECK(put.error().code == "runtime_dir_unusable");
    CHECK_THAT(put.error().message, Catch::Contains(file.parent_path().string()));
    CHECK_FALSE(pushed.forget(hex_digest('c')).has_value());
    CHECK(pushed.records() == std::vector<PushedRecord>{pushed_record_of("stdlib", 'c', 'a')});
}

TEST_CASE("A damaged record of pushed images is refused with its path and what is wrong")
{
    const auto good = pushed_record_of("stdlib", 'c', 'a');
    CHECK(registry::parse_pushed_images(pushed_file_with(pushed_members_of(good)), "/f").has_value());
    CHECK_THAT(pushed_damage_of("not json"), Catch::Contains("not JSON"));
    CHECK_THAT(pushed_damage_of("{}"), Catch::Contains("schema_version is missing"));
    CHECK_THAT(pushed_damage_of(R"({"schema_version": 2, "pushed": []})"), Catch::Contains("schema_version is not 1"));
    CHECK_THAT(pushed_damage_of(R"({"schema_version": 1, "pushed": [], "extra": 1})"), Catch::Contains("extra is not a known field"));
    CHECK_THAT(pushed_damage_of(R"({"schema_version": 1, "pushed": {}})"), Catch::Contains("pushed"));
    CHECK_THAT(pushed_damage_of(R"({"schema_version": 1, "schema_version": 1, "pushed": []})"),
               Catch::Contains("repeats the key \"schema_version\""));
    CHECK_THAT(pushed_damage_of(pushed_file_with(pushed_members_of(good) + R"(, "tag": "latest")")),
               Catch::Contains("pushed[0].tag is not a known field"));
    CHECK_THAT(pushed_damage_of(pushed_file_with(R"("image_name": "stdlib")")), Catch::Contains("pushed[0].image_id is missing"));
    CHECK_THAT(pushed_damage_of(R"({"schema_version": 1, "pushed": [)" + ("{" + pushed_members_of(good) + "}, {" + pushed_members_of(good) + "}") +
                         "]}"),
               Catch::Contains("recorded twice"));

    auto mismatch = good;
    mismatch.manifest_digest = hex_digest('b');
    CHECK_THAT(pushed_damage_of(pushed_file_with(pushed_members_of(mismatch))), Catch::Contains("digest is not manifest_digest"));
    auto renamed = good;
    renamed.image_name = "data";
    CHECK_THAT(pushed_damage_of(pushed_file_with(pushed_members_of(renamed))), Catch::Contains("is not PREFIX/data"));
    auto tagged = good;
    tagged.reference = "127.0.0.1:5000/pybox/stdlib:3.11";
    CHECK_THAT(pushed_damage_of(pushed_file_with(pushed_members_of(tagged))), Catch::Contains("names no digest"));
    auto hub = good;
    hub.reference = "pybox/stdlib@" + hex_digest('a');
    CHECK_THAT(pushed_damage_of(pushed_file_with(pushed_members_of(hub))), Catch::Contains("names no registry"));
    auto upper = good;
    upper.image_id = "sha256:" + std::string(64, 'C');
    CHECK_THAT(pushed_damage_of(pushed_file_with(pushed_members_of(upper))), Catch::Contains("image_id is not sha256:"));
    auto undated = good;
    undated.pushed_at = "yesterday";
    CHECK_THAT(pushed_damage_of(pushed_file_with(pushed_members_of(undated))), Catch::Contains("pushed_at is not an RFC 3339 UTC time"));
    CHECK_THAT(pushed_damage_of(std::string(registry::k_max_pushed_images_file_bytes + 1, ' ')), Catch::Contains("larger than"));
    CHECK_THAT(pushed_damage_of("{\"schema_version\": 1, \"pushed\": [], \"\xff\": 1}"), Catch::Contains("not UTF-8"));
}

TEST_CASE("Loading a damaged record of pushed images names the file")
{
    test::TempRuntime runtime;
    const auto file = runtime.paths.pushed_images_file("cluster");
    put_text(file, R"({"schema_version": 1})");
    const auto loaded = PushedImages::load(file);
    REQUIRE_FALSE(loaded.has_value());
    CHECK(loaded.error().code == "pushed_images_invalid");
    CHECK_THAT(loaded.error().message, Catch::Contains(file.string()) && Catch::Contains("pushed is missing"));
    put_text(file, std::string(registry::k_max_pushed_images_file_bytes + 1, ' '));
    const auto large = PushedImages::load(file);
    REQUIRE_FALSE(large.has_value());
    CHECK(large.error().code == "pushed_images_invalid");
    CHECK_THAT(large.error().message, Catch::Contains(file.string()) && Catch::Contains("larger than"));
}
