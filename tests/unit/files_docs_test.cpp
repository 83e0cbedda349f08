// The numbers of runs that move files, three places that must agree: common/limits.hpp and the
// report parser (daemon/run/files_report.hpp), the fixed files helper that runs in the box
// (daemon/run/files_helper.py: its MAX_* constants and the reasons it passes to skip()), and
// what docs/reference.md and docs/receipt.md tell users.
#include "common/limits.hpp"
#include "daemon/run/files_report.hpp"
#include "proto/box_policy.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using namespace pybox;
using pybox::test::read_text;

// 8388608 -> "8,388,608".
std::string with_commas(std::uint64_t value)
{
    const std::string digits = std::to_string(value);
    std::string text;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
        text += digits[i];
    }
    return text;
}

// The helper's line "MAX_FILES, MAX_BYTES, ... = 64, 8 << 20, ...", as name -> value.
std::map<std::string, std::uint64_t> helper_limits()
{
    const std::string helper = read_text(pybox::test::source_dir() / "daemon/run/files_helper.py");
    std::smatch line;
    REQUIRE(std::regex_search(helper, line, std::regex(R"(\n(MAX_[A-Z_, ]+) = ([0-9<, ]+)\n)")));
    std::istringstream names(line[1].str()), values(line[2].str());
    std::map<std::string, std::uint64_t> limits;
    for (std::string name, value; std::getline(names, name, ',') && std::getline(values, value, ',');) {
        name.erase(0, name.find_first_not_of(' '));
        const auto shift = value.find("<<");
        limits[name] = shift == std::string::npos ? std::stoull(value)
                                                  : std::stoull(value.substr(0, shift)) << std::stoull(value.substr(shift + 2));
    }
    return limits;
}

std::string doc_row(const std::string& file, const std::string& first_cell)
{
    std::istringstream doc(read_text(pybox::test::source_dir() / "docs" / file));
    for (std::string line; std::getline(doc, line);)
        if (line.starts_with("| " + first_cell + " |")) return line;
    FAIL("docs/" << file << " has no row " << first_cell);
    return {};
}

}  // namespace

TEST_CASE("The files helper in the box keeps the limits the daemon and the parser keep")
{
    const auto helper = helper_limits();
    CHECK(helper.at("MAX_FILES") == limits::k_max_output_files);
    CHECK(helper.at("MAX_BYTES") == limits::k_max_output_bytes);
    CHECK(helper.at("MAX_NAME") == limits::k_max_file_name_bytes);
    CHECK(helper.at("MAX_LISTED") == daemon::k_max_listed_skipped);
}

TEST_CASE("The reference's files rows state the limits of the code and the helper")
{
    const auto helper = helper_limits();
    const auto in = doc_row("reference.md", "Files in (`--in`)");
    CHECK_THAT(in, Catch::Contains(std::to_string(limits::k_max_input_files) + " files, " +
                                   std::to_string(limits::k_max_input_bytes >> 20) + " MiB (" +
                                   with_commas(limits::k_max_input_bytes) + " bytes) in all"));
    CHECK_THAT(in, Catch::Contains("names at most " + std::to_string(limits::k_max_file_name_bytes) + " bytes"));
    const auto back = doc_row("reference.md", "Files back (`--out`)");
    CHECK_THAT(back, Catch::Contains(std::to_string(limits::k_max_output_files) + " regular files, " +
                                     std::to_string(limits::k_max_output_bytes >> 20) + " MiB in all"));
    CHECK_THAT(back, Catch::Contains(with_commas(helper.at("MAX_SEEN")) + " entries"));
    CHECK_THAT(back, Catch::Contains("lists " + std::to_string(helper.at("MAX_LISTED")) + " skipped"));
    CHECK_THAT(back, Catch::Contains(std::to_string(helper.at("MAX_DEPTH")) + " levels deep"));
    CHECK_THAT(doc_row("reference.md", "`/tmp` of a run that moves files"),
               Catch::Contains(std::to_string(limits::k_files_tmpfs_bytes >> 20) + " MiB (" +
                               std::to_string(proto::BoxPolicy{}.tmpfs_bytes >> 20) + " MiB otherwise)"));
}

TEST_CASE("The receipt guide lists exactly the skip reasons the parser accepts and the helper gives")
{
    const std::string guide = read_text(pybox::test::source_dir() / "docs/receipt.md");
    const auto table = guide.find("\n|", guide.find("Reasons in `skipped`:"));
    REQUIRE(table != std::string::npos);
    std::set<std::string> documented;
    std::istringstream rows(guide.substr(table + 1));
    for (std::string row; std::getline(rows, row) && row.starts_with("|");) {
        std::smatch name;
        if (std::regex_search(row, name, std::regex(R"(^\| `([a-z_]+)` \|)"))) documented.insert(name[1].str());
    }
    const std::set<std::string> parsed(std::begin(daemon::k_skip_reasons), std::end(daemon::k_skip_reasons));
    CHECK(documented == parsed);

    const std::string helper = read_text(pybox::test::source_dir() / "daemon/run/files_helper.py");
    std::set<std::string> given;
    const std::regex call(R"(skip\(report, [^,]+, '([a-z_]+)'\))");
    for (std::sregex_iterator it(helper.begin(), helper.end(), call), end; it != end; ++it) given.insert((*it)[1].str());
    CHECK(given == parsed);

    const auto helper_max = helper_limits();
    CHECK_THAT(doc_row("receipt.md", "`skipped`"), Catch::Contains("at most " + std::to_string(helper_max.at("MAX_LISTED"))));
    CHECK_THAT(doc_row("receipt.md", "`skipped_unlisted`"), Catch::Contains(with_commas(helper_max.at("MAX_SEEN")) + " entries"));
}
