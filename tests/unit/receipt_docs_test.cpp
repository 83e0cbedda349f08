// docs/receipt.md against the code: every explanation code, unknown key, phase and time budget
// the daemon can write is listed there, and nothing is listed that the code never writes. The
// code's side is read from the daemon's sources by the call patterns that emit each kind
// (explain("CODE", ...), unknown["key"], PhaseTimer(*this, "phase"[, "budget"]),
// timeouts.push_back("budget")), so a new emitter that uses another pattern must extend the
// patterns here.
#include "client/short_view.hpp"
#include "daemon/kube/kube_box_engine.hpp"
#include "proto/receipt.hpp"
#include "proto/receipt_signature.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/sample_receipt.hpp"
#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using Names = std::set<std::string>;

using pybox::test::read_text;

// The daemon's sources, concatenated.
const std::string& daemon_sources()
{
    static const std::string text = [] {
        std::string all;
        for (const auto& entry : fs::recursive_directory_iterator(pybox::test::source_dir() / "daemon"))
            if (entry.path().extension() == ".cpp") all += read_text(entry.path());
        return all;
    }();
    return text;
}

Names captures(const std::string& text, const std::regex& pattern, std::size_t group = 1)
{
    Names names;
    for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it)
        if ((*it)[group].matched) names.insert((*it)[group].str());
    return names;
}

// The text of the part of docs/receipt.md from `heading` to the next heading of its level.
std::string doc_section(const std::string& heading)
{
    static const std::string doc = read_text(pybox::test::source_dir() / "docs" / "receipt.md");
    const auto start = doc.find("\n" + heading + "\n");
    REQUIRE(start != std::string::npos);
    const auto level = heading.substr(0, heading.find(' ') + 1);
    const auto end = doc.find("\n" + level, start + heading.size() + 1);
    return doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The backticked names in the first column of the rows of the table that follows `after` in
// `text` ("| `a`, `b` | ..." gives a and b).
Names first_column(const std::string& text, const std::string& after)
{
    const auto table = text.find("\n|", text.find(after));
    REQUIRE(table != std::string::npos);
    Names names;
    std::istringstream lines(text.substr(table + 1));
    for (std::string line; std::getline(lines, line) && line.starts_with("|");) {
        const auto cell = line.substr(1, line.find('|', 1) - 1);
        for (const auto& name : captures(cell, std::regex("`([^`]+)`"))) names.insert(name);
    }
    return names;
}

}  // namespace

TEST_CASE("Every explanation code the daemon writes is documented, and every documented one is written")
{
    const auto written =
        captures(daemon_sources(), std::regex(R"re((?:explain|note_engine_failure)\(\s*"([A-Z][A-Z_]+)")re"));
    CHECK(written.size() > 10);
    CHECK(first_column(doc_section("## explanations"), "| Code |") == written);
}

TEST_CASE("Every unknown key the daemon writes is documented, and every documented one is written")
{
    auto written = captures(daemon_sources(), std::regex(R"re(unknown\[\s*"([a-z_]+)"\s*\])re"));
    const auto added = captures(daemon_sources(), std::regex(R"re(unknown\.emplace_back\(\s*"([a-z_]+)")re"));
    written.insert(added.begin(), added.end());
    for (const auto& [key, why] : pybox::kube::sealed_pod_unknowns()) written.insert(key);
    CHECK(written.size() >= 5);
    CHECK(first_column(doc_section("## unknown"), "| Key | When |") == written);
}

TEST_CASE("The documented phases are exactly the ones a run enters")
{
    const auto entered = captures(daemon_sources(), std::regex(R"re(PhaseTimer \w+\(\*this, "([a-z]+)")re"));
    CHECK(first_column(doc_section("## lifecycle"), "| Phase |") == entered);
}

TEST_CASE("The documented time budgets are exactly the ones lifecycle.timeouts can name")
{
    const std::regex phase(R"re(PhaseTimer \w+\(\*this, "([a-z]+)"(?:, "([a-z]+)")?\))re");
    Names budgets;
    for (std::sregex_iterator it(daemon_sources().begin(), daemon_sources().end(), phase), end; it != end; ++it)
        budgets.insert((*it)[2].matched ? (*it)[2].str() : (*it)[1].str());
    const auto pushed = captures(daemon_sources(), std::regex(R"re(timeouts\.push_back\("([a-z]+)"\))re"));
    budgets.insert(pushed.begin(), pushed.end());

    const auto lifecycle = doc_section("## lifecycle");
    Names documented;
    const auto table = lifecycle.find("| Phase |");
    std::istringstream lines(lifecycle.substr(table));
    for (std::string line; std::getline(lines, line) && line.starts_with("|");) {
        const auto last_cell = line.substr(line.rfind('|', line.size() - 2));
        const auto names = captures(last_cell, std::regex("^\\| `([a-z]+)`"));
        documented.insert(names.begin(), names.end());
    }
    const auto others = first_column(lifecycle, "| Budget |");
    documented.insert(others.begin(), others.end());
    CHECK(documented == budgets);
}

TEST_CASE("The top-level table lists exactly the signed receipt's top-level keys, and the engine and signature "
          "tables theirs")
{
    auto document = pybox::proto::receipt_to_json(pybox::test::sample_receipt());
    REQUIRE(pybox::proto::sign_receipt(document.as_object(), *pybox::SigningKey::generate()).has_value());
    Names top, engine, signature;
    for (const auto& [key, value] : document.as_object()) top.insert(std::string(key));
    for (const auto& [key, value] : document.at("engine").as_object()) engine.insert(std::string(key));
    for (const auto& [key, value] : document.at("signature").as_object()) signature.insert(std::string(key));
    CHECK(first_column(doc_section("## Top level"), "| Key | Type | Meaning |") == top);
    CHECK(first_column(doc_section("## engine"), "| Key | Type | Meaning |") == engine);
    CHECK(first_column(doc_section("## Signature"), "| Key | Type | Meaning |") == signature);
}

TEST_CASE("The signature section's figures are the code's")
{
    const auto section = doc_section("## Signature");
    CHECK_THAT(section, Catch::Contains("`" + std::string(pybox::proto::k_signature_algorithm) + "`"));
    CHECK_THAT(section, Catch::Contains("RFC 8785"));
    CHECK_THAT(section, Catch::Contains(std::to_string(pybox::k_ed25519_public_key_bytes) + " bytes"));
    CHECK_THAT(section, Catch::Contains(std::to_string(pybox::k_ed25519_signature_bytes) + " bytes"));
}

TEST_CASE("The short view's section gives the code's count of environment names shown")
{
    const auto section = doc_section("## The short view");
    CHECK_THAT(section, Catch::Contains("(at most " + std::to_string(pybox::client::k_environment_names_shown) +
                                        ", then `and N more`"));
}
