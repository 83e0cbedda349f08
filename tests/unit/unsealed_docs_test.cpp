// The docs of unsealed runs against the code: docs/reference.md's "Unsealed runs" states the
// limits plan_limits() sets and exactly the environment scrubbed_environment() gives;
// docs/receipt.md lists exactly proto::sealed_only_fields(), the keys of `unsealed`, and the
// explanation codes the unsealed runner writes (explain("CODE", ...) in client/unsealed/).
#include "client/unsealed/unsealed_plan.hpp"
#include "proto/receipt.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <set>
#include <string>

namespace {

using pybox::test::table_row;

namespace fs = std::filesystem;
using Names = std::set<std::string>;
using pybox::test::read_text;

const fs::path k_docs = pybox::test::source_dir() / "docs";

// From `heading` to the next heading of its level.
std::string section(const std::string& file, const std::string& heading)
{
    const auto text = read_text(k_docs / file);
    const auto start = text.find("\n" + heading + "\n");
    REQUIRE(start != std::string::npos);
    const auto level = heading.substr(0, heading.find(' ') + 1);
    const auto end = text.find("\n" + level, start + heading.size() + 1);
    return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

Names captures(const std::string& text, const std::regex& pattern)
{
    Names names;
    for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) names.insert((*it)[1].str());
    return names;
}

// The backticked first cells of the table after `header`.
Names first_column(const std::string& text, const std::string& header)
{
    auto at = text.find(header);
    REQUIRE(at != std::string::npos);
    Names names;
    for (at = text.find('\n', at) + 1; at < text.size() && text[at] == '|'; at = text.find('\n', at) + 1) {
        const auto cell = text.substr(at + 1, text.find('|', at + 1) - at - 1);
        const auto found = captures(cell, std::regex("`([^`]+)`"));
        names.insert(found.begin(), found.end());
    }
    return names;
}

}  // namespace

TEST_CASE("The reference states the limits of unsealed runs that the runner sets")
{
    using namespace pybox::client::unsealed;
    const auto text = section("reference.md", "## Unsealed runs");
    const auto limits = plan_limits(2.0, 100);
    CHECK_THAT(table_row(text, "`RLIMIT_AS`"), Catch::Contains(std::to_string(limits.address_space_bytes) + " bytes"));
    CHECK_THAT(table_row(text, "`RLIMIT_NPROC`"), Catch::Contains("+ " + std::to_string(limits.processes - 100)));
    CHECK_THAT(table_row(text, "`RLIMIT_CPU`"), Catch::Contains("rounded up + " + std::to_string(limits.cpu_seconds - 2) + " s"));
    CHECK_THAT(table_row(text, "`RLIMIT_FSIZE`"), Catch::Contains(std::to_string(limits.file_size_bytes) + " bytes"));
    CHECK_THAT(table_row(text, "`RLIMIT_NOFILE`"), Catch::Contains("| " + std::to_string(limits.open_files) + " |"));
    CHECK_THAT(table_row(text, "`RLIMIT_CORE`"), Catch::Contains("| " + std::to_string(limits.core_bytes) + " |"));
}

TEST_CASE("The reference states exactly the environment of unsealed runs")
{
    using namespace pybox::client::unsealed;
    const auto text = section("reference.md", "## Unsealed runs");
    Names documented;
    const std::regex variable(R"(\n\| `([A-Z_]+)` \| (`([^`]*)`|the working folder) \|)");
    for (std::sregex_iterator it(text.begin(), text.end(), variable), end; it != end; ++it)
        documented.insert((*it)[1].str() + "=" + ((*it)[3].matched ? (*it)[3].str() : std::string("/W")));
    const auto environment = scrubbed_environment("/W");
    CHECK(documented == Names(environment.begin(), environment.end()));
    CHECK_THAT(text, Catch::Contains("`" + std::string(k_folder_prefix) + "XXXXXX`"));
    CHECK_THAT(text, Catch::Contains("default `" + std::string(k_default_python) + "`"));
}

TEST_CASE("The receipt's docs list exactly the sealed-only fields")
{
    const auto text = section("receipt.md", "## sealed and unsealed");
    const auto listed = text.substr(text.find("(`proto::sealed_only_fields()`)"), text.find("The other fields") -
                                                                                    text.find("(`proto::sealed_only_fields()`)"));
    Names documented = captures(listed, std::regex("`([a-z0-9_.]+)`"));
    Names fields;
    for (const auto& field : pybox::proto::sealed_only_fields()) fields.insert(std::string(field.path));
    CHECK(documented == fields);
}

TEST_CASE("The receipt's docs list the keys of unsealed and every code the unsealed runner writes")
{
    const auto text = section("receipt.md", "## unsealed");
    Names keys;
    const auto document = pybox::proto::receipt_to_json(pybox::proto::make_unsealed_receipt({}));
    for (const auto& [key, value] : document.at("unsealed").as_object()) keys.insert(std::string(key));
    CHECK(first_column(text, "| Key | Type | Meaning |") == keys);
    std::string sources;
    for (const auto& entry : fs::directory_iterator(pybox::test::source_dir() / "client" / "unsealed"))
        if (entry.path().extension() == ".cpp") sources += read_text(entry.path());
    const auto written = captures(sources, std::regex(R"re(explain\(\s*"([A-Z][A-Z_]+)")re"));
    CHECK(written.size() >= 8);
    CHECK(first_column(text, "| Code | Meaning |") == written);
}

TEST_CASE("Nothing in the daemon can make an unsealed receipt: no call of the maker, no link to its library")
{
    for (const auto& entry : fs::recursive_directory_iterator(pybox::test::source_dir() / "daemon")) {
        const auto name = entry.path().filename().string();
        if (!entry.is_regular_file() || (entry.path().extension() != ".cpp" && entry.path().extension() != ".hpp" &&
                                         name != "CMakeLists.txt"))
            continue;
        INFO(entry.path());
        const auto text = read_text(entry.path());
        CHECK(text.find("make_unsealed_receipt") == std::string::npos);
        CHECK(text.find("pybox_proto_unsealed") == std::string::npos);
        CHECK(text.find("pybox_unsealed") == std::string::npos);
    }
}
