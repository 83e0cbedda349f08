#include "daemon/images/image_registry.hpp"

#include "common/files.hpp"
#include "common/ids.hpp"

#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

using namespace pybox;
using namespace pybox::images;

namespace {

using pybox::test::replaced;

ImageRecord sample_record(std::string name)
{
    return ImageRecord{std::move(name), "sha256:" + std::string(64, 'a'), std::string(64, 'b'),
                       "2026-11-29T20:00:05.021506Z", std::string(64, 'c')};
}

std::string record_json(const std::string& fields)
{
    return R"({"schema_version":1,"images":[{)" + fields + "}]}";
}

const std::string k_good_fields = R"("name":"stdlib","image_id":"sha256:)" + std::string(64, 'a') +
                                  R"(","recipe_sha256":")" + std::string(64, 'b') +
                                  R"(","built_at":"2026-11-29T20:00:05Z","tar_sha256":")" + std::string(64, 'c') + "\"";

void require_invalid(const std::string& text)
{
    const auto parsed = parse_images_file(text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == "images_file_invalid");
}

struct TempRuntime {
    TempRuntime() : paths(std::filesystem::temp_directory_path() / ("pybox-registry-test-" + random_id_128()))
    {
        REQUIRE(paths.ensure_private().has_value());
    }
    ~TempRuntime() { std::filesystem::remove_all(paths.root()); }
    RuntimePaths paths;
};

}  // namespace

TEST_CASE("images.json survives a round trip")
{
    const std::vector<ImageRecord> records{sample_record("stdlib"), sample_record("data")};
    const auto parsed = parse_images_file(serialize_images_file(records));
    REQUIRE(parsed.has_value());
    CHECK(*parsed == records);
}

TEST_CASE("A well-formed images.json entry parses")
{
    const auto parsed = parse_images_file(record_json(k_good_fields));
    REQUIRE(parsed.has_value());
    REQUIRE(parsed->size() == 1);
    CHECK(parsed->front().name == "stdlib");
}

TEST_CASE("images.json that is not the expected shape is refused")
{
    require_invalid("");
    require_invalid("[]");
    require_invalid(R"({"schema_version":1})");
    require_invalid(R"({"schema_version":2,"images":[]})");
    require_invalid(R"({"schema_version":"1","images":[]})");
    require_invalid(R"({"schema_version":1,"images":{}})");
    require_invalid(R"({"schema_version":1,"images":[],"extra":0})");
    require_invalid(R"({"schema_version":1,"images":[1]})");
}

TEST_CASE("images.json entries with wrong keys, types or digests are refused")
{
    require_invalid(record_json(k_good_fields + R"(,"extra":"x")"));
    require_invalid(record_json(replaced(k_good_fields, R"("name":"stdlib",)", "")));
    require_invalid(record_json(replaced(k_good_fields, R"("name":"stdlib")", R"("name":7)")));
    require_invalid(record_json(replaced(k_good_fields, R"("name":"stdlib")", R"("name":"../x")")));
    require_invalid(record_json(replaced(k_good_fields, "sha256:", "sha512:")));
    require_invalid(record_json(replaced(k_good_fields, std::string(64, 'b'), std::string(64, 'B'))));
    require_invalid(record_json(replaced(k_good_fields, std::string(64, 'c'), std::string(63, 'c'))));
    require_invalid(record_json(replaced(k_good_fields, "2026-11-29T20:00:05Z", "")));
}

TEST_CASE("images.json that lists an image twice is refused")
{
    require_invalid(R"({"schema_version":1,"images":[{)" + k_good_fields + "},{" + k_good_fields + "}]}");
}

TEST_CASE("images.json larger than the cap is refused")
{
    require_invalid(record_json(k_good_fields) + std::string(k_max_images_file_bytes, ' '));
}

TEST_CASE("A registry without images.json is empty")
{
    TempRuntime runtime;
    const ImageRegistry registry(runtime.paths);
    const auto records = registry.load();
    REQUIRE(records.has_value());
    CHECK(records->empty());
    const auto found = registry.find("stdlib");
    REQUIRE(found.has_value());
    CHECK_FALSE(found->has_value());
}

TEST_CASE("Putting a record replaces the one with the same name and keeps the file private")
{
    TempRuntime runtime;
    const ImageRegistry registry(runtime.paths);
    REQUIRE(registry.put(sample_record("stdlib")).has_value());
    REQUIRE(registry.put(sample_record("data")).has_value());
    ImageRecord rebuilt = sample_record("stdlib");
    rebuilt.image_id = "sha256:" + std::string(64, 'd');
    REQUIRE(registry.put(rebuilt).has_value());
    const auto records = registry.load();
    REQUIRE(records.has_value());
    REQUIRE(records->size() == 2);
    const auto found = registry.find("stdlib");
    REQUIRE(found.has_value());
    REQUIRE(found->has_value());
    CHECK((*found)->image_id == rebuilt.image_id);
    const auto perms = std::filesystem::status(runtime.paths.images_file()).permissions();
    CHECK((perms & std::filesystem::perms::all) ==
          (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
    CHECK(registry.spec_file("stdlib") == runtime.paths.recipes_dir() / "stdlib.lock");
}

TEST_CASE("Removing a record keeps the others and answers what was removed")
{
    TempRuntime runtime;
    const ImageRegistry registry(runtime.paths);
    REQUIRE(registry.put(sample_record("stdlib")).has_value());
    REQUIRE(registry.put(sample_record("my-tools")).has_value());
    const auto removed = registry.remove("my-tools");
    REQUIRE(removed.has_value());
    REQUIRE(removed->has_value());
    CHECK(**removed == sample_record("my-tools"));
    const auto records = registry.load();
    REQUIRE(records.has_value());
    CHECK(*records == std::vector<ImageRecord>{sample_record("stdlib")});
    const auto again = registry.remove("my-tools");
    REQUIRE(again.has_value());
    CHECK_FALSE(again->has_value());
}

TEST_CASE("A damaged images.json on disk is reported, not ignored")
{
    TempRuntime runtime;
    REQUIRE(write_file_atomic(runtime.paths.images_file(), "{not json").has_value());
    const auto records = ImageRegistry(runtime.paths).load();
    REQUIRE_FALSE(records.has_value());
    CHECK(records.error().code == "images_file_invalid");
    CHECK(records.error().message.find("pybox setup") != std::string::npos);
}
