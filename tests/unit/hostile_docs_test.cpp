// docs/hostile.md against the tests: its cases are numbered 1..N without a gap, each names its
// tests (or says it has none), every test it names is a TEST_CASE of the file it names, every
// TEST_CASE in tests/hostile/ is named there, and a "docs/hostile.md case N" comment on the line
// before a TEST_CASE points at a case that names that test.
#include "tests/support/build_paths.hpp"
#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pybox::test::read_text;

struct CitedTest {
    std::string file;  // relative to the checkout
    std::string name;
};

struct HostileCase {
    int number = 0;
    std::string title;
    std::vector<CitedTest> tests;
    bool says_untested = false;
};

// The cases of docs/hostile.md in the order they appear: "### N. Title", then its lines
// "- `FILE`: "NAME"" and "No test ..." up to the next heading.
std::vector<HostileCase> hostile_cases()
{
    const std::regex heading(R"(^### ([0-9]+)\. (.+)$)");
    const std::regex cited(R"re(^- `([^`]+)`: "(.*)"$)re");
    std::istringstream doc(read_text(pybox::test::source_dir() / "docs/hostile.md"));
    std::vector<HostileCase> cases;
    bool in_case = false;
    for (std::string line; std::getline(doc, line);) {
        std::smatch match;
        if (std::regex_match(line, match, heading)) {
            cases.push_back({std::stoi(match[1].str()), match[2].str(), {}, false});
            in_case = true;
        } else if (line.starts_with("#")) {
            in_case = false;
        } else if (in_case && std::regex_match(line, match, cited)) {
            cases.back().tests.push_back({match[1].str(), match[2].str()});
        } else if (in_case && line.starts_with("No test")) {
            cases.back().says_untested = true;
        }
    }
    return cases;
}

// The names of the TEST_CASEs in a C++ source, each with the line it starts on: the string
// literals right after "TEST_CASE(", joined as the compiler joins adjacent literals.
std::map<std::string, int> test_case_names(const std::string& text)
{
    std::map<std::string, int> names;
    const std::string opening = "TEST_CASE(";
    for (auto at = text.find(opening); at != std::string::npos; at = text.find(opening, at + 1)) {
        auto i = at + opening.size();
        std::string name;
        while (true) {
            while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
            if (i >= text.size() || text[i] != '"') break;
            for (++i; i < text.size() && text[i] != '"'; ++i) {
                if (text[i] == '\\' && i + 1 < text.size()) ++i;
                name += text[i];
            }
            ++i;
        }
        if (!name.empty()) names.emplace(name, static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 1);
    }
    return names;
}

std::vector<fs::path> hostile_test_files()
{
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(pybox::test::source_dir() / "tests/hostile"))
        if (entry.path().extension() == ".cpp") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    REQUIRE_FALSE(files.empty());
    return files;
}

}  // namespace

TEST_CASE("docs/hostile.md numbers its cases from 1 without gaps, and each names its tests or says it has none")
{
    const auto cases = hostile_cases();
    REQUIRE(cases.size() >= 48);
    for (std::size_t i = 0; i < cases.size(); ++i) {
        INFO("case " << cases[i].number << ". " << cases[i].title);
        CHECK(cases[i].number == static_cast<int>(i) + 1);
        CHECK((!cases[i].tests.empty() || cases[i].says_untested));
    }
}

TEST_CASE("Every test docs/hostile.md names is a TEST_CASE of the file it names")
{
    std::map<std::string, std::map<std::string, int>> names_by_file;
    for (const auto& hostile : hostile_cases())
        for (const auto& test : hostile.tests) {
            INFO("case " << hostile.number << ": " << test.file << ": \"" << test.name << "\"");
            REQUIRE(test.file.starts_with("tests/"));
            REQUIRE(fs::is_regular_file(pybox::test::source_dir() / test.file));
            if (!names_by_file.contains(test.file)) names_by_file[test.file] = test_case_names(read_text(pybox::test::source_dir() / test.file));
            CHECK(names_by_file[test.file].contains(test.name));
        }
}

TEST_CASE("Every TEST_CASE in tests/hostile is named in docs/hostile.md")
{
    std::set<std::pair<std::string, std::string>> cited;
    for (const auto& hostile : hostile_cases())
        for (const auto& test : hostile.tests) cited.emplace(test.file, test.name);
    for (const auto& file : hostile_test_files()) {
        const auto relative = fs::relative(file, pybox::test::source_dir()).generic_string();
        for (const auto& [name, line] : test_case_names(read_text(file))) {
            INFO(relative << ":" << line << ": \"" << name << "\"");
            CHECK(cited.contains({relative, name}));
        }
    }
}

TEST_CASE("A \"docs/hostile.md case N\" comment before a test in tests/hostile names a case that lists that test")
{
    std::map<int, std::set<std::pair<std::string, std::string>>> listed;
    for (const auto& hostile : hostile_cases())
        for (const auto& test : hostile.tests) listed[hostile.number].emplace(test.file, test.name);
    const std::regex comment(R"(^// docs/hostile\.md cases? ([0-9]+(?:(?:, | and )[0-9]+)*)\b.*$)");
    const std::regex number("[0-9]+");
    std::size_t comments = 0;
    for (const auto& file : hostile_test_files()) {
        const auto relative = fs::relative(file, pybox::test::source_dir()).generic_string();
        const auto text = read_text(file);
        const auto names = test_case_names(text);
        std::istringstream lines(text);
        std::string previous;
        int line_number = 0;
        for (std::string line; std::getline(lines, line); previous = line) {
            ++line_number;
            std::smatch match;
            if (!line.starts_with("TEST_CASE(") || !std::regex_match(previous, match, comment)) continue;
            const auto named = std::find_if(names.begin(), names.end(), [&](const auto& entry) { return entry.second == line_number; });
            REQUIRE(named != names.end());
            const std::string numbers = match[1].str();
            for (std::sregex_iterator it(numbers.begin(), numbers.end(), number), end; it != end; ++it) {
                ++comments;
                INFO(relative << ":" << line_number << ": case " << it->str() << ", \"" << named->first << "\"");
                CHECK(listed[std::stoi(it->str())].contains({relative, named->first}));
            }
        }
    }
    CHECK(comments >= 48);
}
