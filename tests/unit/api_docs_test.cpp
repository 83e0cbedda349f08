// docs/api.md's error table against the one in code (common/api_errors.def, read through
// proto/error_codes.hpp), both ways, and that table against the sources: every code that
// daemon/, proto/ or common/ makes is in it, unless it is one of those that never reach an
// answer (common/unanswered_errors.def, each with why), and every code in either is made
// somewhere. Codes are read from the sources by the patterns that make them
// (make_error(api_error::k_code, ...), make_error(cond ? api_error::k_a : api_error::k_b, ...),
// line_error(...)), so a new helper that takes a code must extend the patterns here. Every code
// is a constant of common/api_error_codes.hpp, expanded from those two files, and no product
// source spells one as a literal. The table's file keeps the one-row-per-line form that scripts
// read (the Python library's tests).
#include "common/api_error_codes.hpp"
#include "common/limits.hpp"
#include "daemon/server/http_server.hpp"
#include "proto/error_codes.hpp"
#include "proto/run_events.hpp"
#include "tests/support/build_paths.hpp"

#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Row = std::tuple<unsigned, bool, std::string>;  // status, retryable, meaning

// Codes the sources make that no answer carries (common/unanswered_errors.def): code -> why.
const std::map<std::string, std::string> k_never_answered = {
#define PYBOX_UNANSWERED_ERROR(code, why) {pybox::api_error::k_##code, why},
#include "common/unanswered_errors.def"
#undef PYBOX_UNANSWERED_ERROR
};

using pybox::test::read_text;

// The sources of daemon/, proto/, common/ and util/, concatenated, without the table itself.
const std::string& sources()
{
    static const std::string text = [] {
        std::string all;
        for (const char* dir : {"daemon", "proto", "common", "util"})
            for (const auto& entry : fs::recursive_directory_iterator(pybox::test::source_dir() / dir)) {
                const auto extension = entry.path().extension();
                if ((extension == ".cpp" || extension == ".hpp") && entry.path().stem() != "error_codes")
                    all += read_text(entry.path());
            }
        return all;
    }();
    return text;
}

std::set<std::string> made_codes()
{
    // A code is a constant of common/api_error_codes.hpp (or, wrongly, a literal: the test
    // below refuses those).
    static const std::regex pattern(
        R"re((?:make_error|line_error)\((?:[^,;"()]*\?\s*)?(?:"([a-z0-9_]+)"|(?:pybox::)?api_error::k_([a-z0-9_]+))(?:\s*:\s*(?:"([a-z0-9_]+)"|(?:pybox::)?api_error::k_([a-z0-9_]+)))?)re");
    std::set<std::string> codes;
    const std::string& text = sources();
    for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it)
        for (std::size_t group = 1; group <= 4; ++group)
            if ((*it)[group].matched) codes.insert((*it)[group].str());
    return codes;
}

// The lines of a table file (common/*.def) that are not `//` comments.
std::vector<std::string> table_rows(const char* file)
{
    std::istringstream text(read_text(pybox::test::source_dir() / "common" / file));
    std::vector<std::string> rows;
    for (std::string line; std::getline(text, line);)
        if (!line.starts_with("//")) rows.push_back(line);
    return rows;
}

// C++ source text with its comments blanked out; string and character literals are kept.
std::string without_comments(const std::string& text)
{
    std::string out = text;
    std::size_t i = 0;
    while (i < out.size()) {
        if (out.compare(i, 2, "//") == 0) {
            while (i < out.size() && out[i] != '\n') out[i++] = ' ';
        } else if (out.compare(i, 2, "/*") == 0) {
            const auto end = out.find("*/", i + 2);
            const auto stop = end == std::string::npos ? out.size() : end + 2;
            for (; i < stop; ++i)
                if (out[i] != '\n') out[i] = ' ';
        } else if (out.compare(i, 2, "R\"") == 0) {
            const auto open = out.find('(', i + 2);
            if (open == std::string::npos) break;
            const std::string close = ")" + out.substr(i + 2, open - i - 2) + "\"";
            const auto end = out.find(close, open);
            i = end == std::string::npos ? out.size() : end + close.size();
        } else if (out[i] == '\'' && i > 0 && std::isalnum(static_cast<unsigned char>(out[i - 1]))) {
            ++i;  // a digit separator (4'000'000)
        } else if (out[i] == '"' || out[i] == '\'') {
            const char quote = out[i++];
            while (i < out.size() && out[i] != quote && out[i] != '\n') i += out[i] == '\\' ? std::size_t{2} : std::size_t{1};
            ++i;
        } else {
            ++i;
        }
    }
    return out;
}

// Codes of the table that are also words of PyBox's documents, where they are no error code: a
// literal of one is refused only where it names an error (made, or compared with a code).
const std::map<std::string, std::string> k_document_words = {
    {"busy", "GET /v1/engine's count of busy boxes (proto/answers.cpp)"},
    {"cancelled", "the receipt's lifecycle.cancelled, and a repair's stop reason"},
    {"client_disconnected", "a receipt's kill_reason (daemon/run/termination.cpp)"},
};

std::map<std::string, Row> code_table()
{
    std::map<std::string, Row> rows;
    for (const auto& row : pybox::proto::api_error_codes()) {
        const bool added = rows.emplace(std::string(row.code), Row{row.http_status, row.retryable, std::string(row.meaning)}).second;
        CHECK(added);
    }
    return rows;
}

// The rows of the table under "## Errors" in docs/api.md: | `code` | status | yes/no | meaning |
std::map<std::string, Row> docs_table()
{
    const std::string doc = read_text(pybox::test::source_dir() / "docs" / "api.md");
    const auto start = doc.find("\n## Errors\n");
    REQUIRE(start != std::string::npos);
    const auto end = doc.find("\n## ", start + 1);
    const std::string section = doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
    static const std::regex row_pattern(R"(\n\| `([a-z0-9_]+)` \| ([0-9]{3}) \| (yes|no) \| (.+) \|(?=\n))");
    std::map<std::string, Row> rows;
    for (std::sregex_iterator it(section.begin(), section.end(), row_pattern), stop; it != stop; ++it) {
        const bool added = rows.emplace((*it)[1].str(), Row{static_cast<unsigned>(std::stoul((*it)[2].str())),
                                                            (*it)[3].str() == "yes", (*it)[4].str()})
                               .second;
        CHECK(added);
    }
    return rows;
}

}  // namespace

TEST_CASE("docs/api.md lists exactly the error table in code, with the same status, retry and meaning")
{
    const auto in_docs = docs_table();
    const auto in_code = code_table();
    REQUIRE_FALSE(in_docs.empty());
    for (const auto& [code, row] : in_code) {
        INFO("in proto/error_codes.cpp: " << code);
        const auto found = in_docs.find(code);
        REQUIRE(found != in_docs.end());
        CHECK(std::get<0>(found->second) == std::get<0>(row));
        CHECK(std::get<1>(found->second) == std::get<1>(row));
        CHECK(std::get<2>(found->second) == std::get<2>(row));
    }
    for (const auto& [code, row] : in_docs) {
        INFO("in docs/api.md: " << code);
        CHECK(in_code.contains(code));
    }
}

TEST_CASE("Every error code the daemon makes is in the table or never reaches an answer")
{
    const auto made = made_codes();
    REQUIRE(made.contains("images_file_invalid"));
    for (const auto& code : made) {
        INFO("made in the sources: " << code);
        CHECK((pybox::proto::find_api_error_code(code) != nullptr || k_never_answered.contains(code)));
    }
    for (const auto& [code, why] : k_never_answered) {
        INFO("listed as never answered (" << why << "): " << code);
        CHECK(made.contains(code));
        CHECK(pybox::proto::find_api_error_code(code) == nullptr);
    }
    for (const auto& row : pybox::proto::api_error_codes()) {
        INFO("in the table: " << row.code);
        CHECK(made.contains(std::string(row.code)));
    }
}

TEST_CASE("docs/api.md has a section for every endpoint the router serves")
{
    const std::string router = read_text(pybox::test::source_dir() / "daemon" / "server" / "api_router.cpp");
    const std::string doc = read_text(pybox::test::source_dir() / "docs" / "api.md");
    static const std::regex route(R"re(\{"(/v1/[a-z/]+)", Method::(get|post)(, Access::admin)?\})re");
    // The system mode's list of what only root may call: exactly the router's admin routes.
    const auto system_mode = doc.substr(doc.find("**System mode.**"));
    const auto admin_list = system_mode.substr(0, system_mode.find("\n\n", system_mode.find("\n- ")));
    std::size_t routes = 0, admin_routes = 0;
    for (std::sregex_iterator it(router.begin(), router.end(), route), end; it != end; ++it, ++routes) {
        // A route ending in '/' takes one more path part, which the heading names in capitals.
        const std::string endpoint = std::string((*it)[2].str() == "get" ? "GET " : "POST ") + (*it)[1].str();
        INFO(endpoint);
        CHECK(std::regex_search(doc, std::regex("\n### [^\n]*`" + endpoint + (endpoint.ends_with('/') ? "[A-Z_]+" : "") + "`")));
        const bool admin = (*it)[3].matched;
        admin_routes += admin ? 1 : 0;
        CHECK((admin_list.find("\n- `" + endpoint + "`") != std::string::npos) == admin);
    }
    CHECK(routes == 15);
    CHECK(admin_routes == 5);
    CHECK_THAT(system_mode, Catch::Contains("holds at most " + std::to_string(pybox::limits::k_max_waiting_runs_per_user) +
                                            " of the " + std::to_string(pybox::limits::k_max_waiting_runs) +
                                            " places in line"));
}

TEST_CASE("common/api_errors.def holds only comments and one row per line in the form scripts read, in the table's order")
{
    // The form the Python library's tests read: PYBOX_API_ERROR(code, status, retryable, "meaning").
    static const std::regex row(R"re(PYBOX_API_ERROR\(([a-z][a-z0-9_]*), ([0-9]{3}), (true|false), "((?:[^"\\]|\\.)*)"\))re");
    const auto rows = table_rows("api_errors.def");
    const auto table = pybox::proto::api_error_codes();
    REQUIRE(rows.size() == table.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        INFO("line: " << rows[i]);
        std::smatch match;
        REQUIRE(std::regex_match(rows[i], match, row));
        CHECK(match[1].str() == table[i].code);
        CHECK(std::stoul(match[2].str()) == table[i].http_status);
        CHECK((match[3].str() == "true") == table[i].retryable);
        CHECK(match[4].str() == table[i].meaning);  // no meaning holds an escape today
    }
    CHECK(std::string(pybox::api_error::k_invalid_http) == "invalid_http");
    CHECK(std::string(pybox::api_error::k_busy) == "busy");
}

TEST_CASE("common/unanswered_errors.def holds only comments and one row per line, none of them a code of the table")
{
    static const std::regex row(R"re(PYBOX_UNANSWERED_ERROR\(([a-z][a-z0-9_]*), "([^"\\]+)"\))re");
    const auto rows = table_rows("unanswered_errors.def");
    REQUIRE(rows.size() == k_never_answered.size());
    for (const auto& line : rows) {
        INFO("line: " << line);
        std::smatch match;
        REQUIRE(std::regex_match(line, match, row));
        CHECK(k_never_answered.contains(match[1].str()));
        CHECK(pybox::proto::find_api_error_code(match[1].str()) == nullptr);
    }
    CHECK(std::string(pybox::api_error::k_config_invalid) == "config_invalid");
}

TEST_CASE("No product source writes an error code as a string literal, only as its constant")
{
    auto codes = code_table();
    for (const auto& [code, why] : k_never_answered) codes.emplace(code, Row{0, false, why});
    static const std::regex literal(R"re("([a-z0-9_]+)")re");
    static const std::regex error_context(R"re((make_error\(|line_error\(|code\s*[!=]=\s*)[^;]*$)re");
    std::size_t files = 0;
    for (const char* dir : {"client", "daemon", "proto", "common", "util"})
        for (const auto& entry : fs::recursive_directory_iterator(pybox::test::source_dir() / dir)) {
            const auto extension = entry.path().extension();
            if (extension != ".cpp" && extension != ".hpp") continue;
            if (entry.path().filename() == "api_error_codes.hpp") continue;
            ++files;
            const std::string text = without_comments(read_text(entry.path()));
            for (std::sregex_iterator it(text.begin(), text.end(), literal), end; it != end; ++it) {
                const std::string word = (*it)[1].str();
                if (!codes.contains(word)) continue;
                const auto line_start = text.rfind('\n', static_cast<std::size_t>(it->position())) + 1;
                const std::string before = text.substr(line_start, static_cast<std::size_t>(it->position()) - line_start);
                if (k_document_words.contains(word) && !std::regex_search(before, error_context)) continue;
                INFO(fs::relative(entry.path(), pybox::test::source_dir()).generic_string() << ": \"" << word << "\" after: " << before);
                CHECK(false);
            }
        }
    CHECK(files > 100);
}

TEST_CASE("api.md's streamed runs state the event bound and the write time-out the code uses")
{
    const std::string doc = read_text(pybox::test::source_dir() / "docs" / "api.md");
    const auto at = doc.find("#### Streamed runs");
    REQUIRE(at != std::string::npos);
    const std::string section = doc.substr(at, doc.find("\n### ", at) - at);
    CHECK_THAT(section, Catch::Contains("at most 16,384 bytes"));
    CHECK(pybox::proto::k_max_event_data_bytes == 16'384);
    const auto write_s = pybox::daemon::HttpServerOptions{}.response_write_timeout.count() / 1000;
    CHECK_THAT(section, Catch::Contains("waits " + std::to_string(write_s) + " s"));
    CHECK_THAT(section, Catch::Contains(std::string(pybox::proto::k_run_events_media_type)));
}
