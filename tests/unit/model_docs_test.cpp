// docs/model.md against the code: its config table lists exactly the keys of config.json's
// "model", its limits and defaults are the client's constants, and its errors table lists
// exactly the codes the model client makes.
#include "daemon/config/config_keys.hpp"
#include "daemon/model/model_limits.hpp"
#include "daemon/model/model_url.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

using pybox::test::table_row;

namespace fs = std::filesystem;
using namespace pybox::model;
using pybox::test::lines_of;

const std::string& doc()
{
    static const std::string text = pybox::test::read_text(pybox::test::source_dir() / "docs" / "model.md");
    return text;
}

// The first cells (backticked) of the table under `heading`.
std::set<std::string> first_cells(const std::string& heading)
{
    std::set<std::string> cells;
    bool in_section = false;
    for (const auto& line : lines_of(doc())) {
        if (line.starts_with("## ")) in_section = line == heading;
        if (in_section && line.starts_with("| `")) cells.insert(line.substr(3, line.find('`', 3) - 3));
    }
    return cells;
}

std::string with_commas(std::size_t number)
{
    const std::string digits = std::to_string(number);
    std::string text;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
        text += digits[i];
    }
    return text;
}

}  // namespace

TEST_CASE("docs/model.md's config table lists exactly the keys of config.json's model in the table of config.json's keys")
{
    std::set<std::string> known;
    for (const auto& key : pybox::config::config_keys())
        if (key.section == pybox::config::k_model_section) known.insert(std::string(key.name));
    CHECK(first_cells("## Configuring it") == known);
}

TEST_CASE("docs/model.md states the client's defaults and ranges from the code")
{
    CHECK_THAT(table_row(doc(), "`base_url`"), Catch::Contains("`" + std::string(k_default_base_url) + "`"));
    CHECK_THAT(table_row(doc(), "`temperature`"), Catch::Contains("| `0.2` |") && Catch::Contains("0-2"));
    CHECK(k_default_temperature == 0.2);
    CHECK(k_max_temperature == 2.0);
    CHECK_THAT(table_row(doc(), "`max_tokens`"), Catch::Contains("| `" + std::to_string(k_default_max_tokens) + "` |") &&
                                        Catch::Contains("1-" + std::to_string(k_max_max_tokens)));
    CHECK_THAT(table_row(doc(), "`answer_timeout_s`"), Catch::Contains("| `" + std::to_string(k_default_answer_timeout_s) + "` |") &&
                                              Catch::Contains("1-" + std::to_string(k_max_answer_timeout_s)));
    CHECK_THAT(table_row(doc(), "`base_url`"), Catch::Contains("at most " + with_commas(k_max_base_url_bytes) + " bytes"));
}

TEST_CASE("docs/model.md's limits table states the client's limits from the code")
{
    using std::chrono::seconds;
    CHECK_THAT(table_row(doc(), "Connect"), Catch::Contains(std::to_string(std::chrono::duration_cast<seconds>(k_connect_timeout).count()) + " s"));
    CHECK_THAT(table_row(doc(), "Answer"), Catch::Contains(std::to_string(k_default_answer_timeout_s) + " s by default, at most " +
                                              std::to_string(k_max_answer_timeout_s) + " s"));
    CHECK_THAT(table_row(doc(), "Answer body"), Catch::Contains(with_commas(k_max_answer_bytes) + " bytes"));
    CHECK_THAT(table_row(doc(), "Answer header"), Catch::Contains(with_commas(k_max_answer_header_bytes) + " bytes"));
    CHECK_THAT(table_row(doc(), "Answer nesting"), Catch::Contains(std::to_string(k_max_answer_depth) + " levels"));
    CHECK_THAT(table_row(doc(), "Request body"), Catch::Contains(with_commas(k_max_request_bytes) + " bytes, at most " +
                                                    std::to_string(k_max_messages) + " messages"));
    CHECK_THAT(table_row(doc(), "Tries"), Catch::Contains(std::to_string(k_max_tries) + " in all"));
    CHECK_THAT(table_row(doc(), "Backoff"), Catch::Contains(std::to_string(std::chrono::duration_cast<seconds>(k_backoff_first).count()) +
                                               " s, doubling, at most " +
                                               std::to_string(std::chrono::duration_cast<seconds>(k_backoff_longest).count()) + " s"));
    CHECK_THAT(table_row(doc(), "Retry-After"), Catch::Contains("up to " + std::to_string(k_max_retry_after.count()) + " s"));
    CHECK_THAT(table_row(doc(), "The key"), Catch::Contains(with_commas(k_max_key_bytes) + " bytes"));
    CHECK_THAT(doc(), Catch::Contains("ends within " + std::to_string(k_max_tries) + " x (" +
                                      std::to_string(std::chrono::duration_cast<seconds>(k_connect_timeout).count()) +
                                      " s + `answer_timeout_s`) plus three waits of\nat most " +
                                      std::to_string(k_max_retry_after.count()) + " s"));
    CHECK(k_max_tries == 4);  // "three waits" above
}

TEST_CASE("docs/model.md's errors table lists exactly the codes the model client makes")
{
    std::string sources;
    for (const auto& entry : fs::directory_iterator(pybox::test::source_dir() / "daemon" / "model"))
        if (entry.path().extension() == ".cpp") sources += pybox::test::read_text(entry.path());
    std::set<std::string> made;
    static const std::regex code(R"re(api_error::k_(model_[a-z_]+))re");
    for (std::sregex_iterator it(sources.begin(), sources.end(), code), end; it != end; ++it) made.insert((*it)[1].str());
    CHECK(first_cells("## Errors") == made);
    // And the interface's header names each one.
    const auto header = pybox::test::read_text(pybox::test::source_dir() / "daemon" / "model" / "model_client.hpp");
    for (const auto& name : made) CHECK_THAT(header, Catch::Contains("\"" + name + "\""));
}
