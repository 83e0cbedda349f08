// docs/architecture.md against the build and the sources: the layers it gives for daemon/ are
// the order the CMake targets link in, util/, common/, proto/ and client/ link as its rules say
// (and util/ includes nothing of the other folders), every folder has its paragraph, and the
// files it names as including <unistd.h> are exactly those that do.
#include "tests/support/build_paths.hpp"
#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

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

std::string architecture() { return read_text(pybox::test::source_dir() / "docs/architecture.md"); }

std::set<std::string> backticked(const std::string& text)
{
    std::set<std::string> words;
    const std::regex word("`([^`]+)`");
    for (std::sregex_iterator it(text.begin(), text.end(), word), end; it != end; ++it) words.insert((*it)[1].str());
    return words;
}

// The targets the CMakeLists.txt files of `folder` (recursively) define, each with the pybox
// targets it links (PUBLIC, PRIVATE or INTERFACE alike).
std::map<std::string, std::set<std::string>> cmake_targets(const std::string& folder)
{
    std::map<std::string, std::set<std::string>> targets;
    const std::regex defined(R"(add_(?:library|executable)\(\s*([A-Za-z0-9_]+))");
    const std::regex links(R"(target_link_libraries\(\s*([A-Za-z0-9_]+)([^)]*)\))");
    const std::regex target_name(R"(\bpybox[A-Za-z0-9_]*)");
    for (const auto& entry : fs::recursive_directory_iterator(pybox::test::source_dir() / folder)) {
        if (entry.path().filename() != "CMakeLists.txt") continue;
        const auto text = read_text(entry.path());
        for (std::sregex_iterator it(text.begin(), text.end(), defined), end; it != end; ++it) targets[(*it)[1].str()];
        for (std::sregex_iterator it(text.begin(), text.end(), links), end; it != end; ++it) {
            const std::string listed = (*it)[2].str();
            for (std::sregex_iterator name(listed.begin(), listed.end(), target_name); name != end; ++name)
                targets[(*it)[1].str()].insert(name->str());
        }
    }
    REQUIRE_FALSE(targets.empty());
    return targets;
}

std::set<std::string> names_of(const std::map<std::string, std::set<std::string>>& targets)
{
    std::set<std::string> names;
    for (const auto& [name, links] : targets) names.insert(name);
    return names;
}

// The numbered list of daemon/ layers: target -> layer (1 is the bottom).
std::map<std::string, int> daemon_layers()
{
    std::map<std::string, int> layers;
    const std::regex item(R"(^([0-9]+)\. (.*)$)");
    std::istringstream doc(architecture());
    for (std::string line; std::getline(doc, line);) {
        std::smatch match;
        if (!std::regex_match(line, match, item)) continue;
        for (const auto& target : backticked(match[2].str())) {
            INFO(target);
            CHECK_FALSE(layers.contains(target));
            layers[target] = std::stoi(match[1].str());
        }
    }
    return layers;
}

// The paragraph or list item of docs/architecture.md that holds `needle`: a chunk of lines that
// begins after a blank line or at a line starting a list item ("- ").
std::string chunk_with(const std::string& needle)
{
    std::vector<std::string> chunks(1);
    std::istringstream doc(architecture());
    for (std::string line; std::getline(doc, line);) {
        if (line.empty() || line.starts_with("- ")) chunks.emplace_back();
        chunks.back() += line + "\n";
    }
    for (const auto& chunk : chunks)
        if (chunk.find(needle) != std::string::npos) return chunk;
    FAIL("docs/architecture.md has no paragraph with " << needle);
    return {};
}

}  // namespace

TEST_CASE("docs/architecture.md lists every daemon target in one layer, and each links only targets of lower layers")
{
    const auto targets = cmake_targets("daemon");
    const auto layers = daemon_layers();
    std::set<std::string> listed;
    for (const auto& [name, layer] : layers) listed.insert(name);
    CHECK(listed == names_of(targets));
    for (const auto& [name, links] : targets) {
        INFO(name);
        REQUIRE(layers.contains(name));
        for (const auto& link : links) {
            if (!targets.contains(link)) continue;
            INFO(name << " (layer " << layers.at(name) << ") links " << link);
            REQUIRE(layers.contains(link));
            CHECK(layers.at(link) < layers.at(name));
        }
    }
}

TEST_CASE("util/ links only util/, common/ only util/ and common/, proto/ only those and proto/, client/ nothing of daemon/, as docs/architecture.md says")
{
    CHECK_THAT(architecture(), Catch::Contains("`util <- common <- proto <- daemon/*, client`"));
    const auto util = cmake_targets("util");
    const auto common = cmake_targets("common");
    const auto proto = cmake_targets("proto");
    const auto daemon = names_of(cmake_targets("daemon"));
    const std::string build_flags = "pybox_build_flags";  // warnings, sanitizers, include path
    for (const auto& [name, links] : util)
        for (const auto& link : links) {
            INFO(name << " links " << link);
            CHECK((link == build_flags || util.contains(link)));
        }
    for (const auto& [name, links] : common)
        for (const auto& link : links) {
            INFO(name << " links " << link);
            CHECK((link == build_flags || util.contains(link) || common.contains(link)));
        }
    for (const auto& [name, links] : proto)
        for (const auto& link : links) {
            INFO(name << " links " << link);
            CHECK((link == build_flags || util.contains(link) || common.contains(link) || proto.contains(link)));
        }
    for (const auto& [name, links] : cmake_targets("client"))
        for (const auto& link : links) {
            INFO(name << " links " << link);
            CHECK_FALSE(daemon.contains(link));
        }
}

TEST_CASE("util/ includes no header of another folder of the product, so it knows nothing of PyBox")
{
    const std::regex project_include(R"re(#include\s+"([a-z_]+)/)re");
    std::size_t files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(pybox::test::source_dir() / "util")) {
        const auto extension = entry.path().extension();
        if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".hpp")) continue;
        ++files;
        const auto text = read_text(entry.path());
        for (std::sregex_iterator it(text.begin(), text.end(), project_include), end; it != end; ++it) {
            INFO(entry.path().filename().string() << " includes " << (*it)[0].str());
            CHECK((*it)[1].str() == "util");
        }
    }
    CHECK(files > 0);
}

TEST_CASE("docs/architecture.md has a paragraph for every folder, and each names a folder that exists")
{
    std::set<std::string> folders{"util/", "common/", "proto/", "daemon/", "client/", "tests/",
                                  "images/", "packaging/", "docs/", "scripts/", "cmake/"};
    for (const char* parent : {"daemon", "client"})
        for (const auto& entry : fs::directory_iterator(pybox::test::source_dir() / parent))
            if (entry.is_directory()) folders.insert(std::string(parent) + "/" + entry.path().filename().string() + "/");
    const std::regex heading(R"(^\*\*([a-z/]+/)\*\*)");
    std::set<std::string> described;
    std::istringstream doc(architecture());
    for (std::string line; std::getline(doc, line);) {
        std::smatch match;
        if (std::regex_search(line, match, heading)) described.insert(match[1].str());
    }
    CHECK(described == folders);
}

TEST_CASE("docs/architecture.md names exactly the files that include <unistd.h>")
{
    std::set<std::string> including;
    for (const char* folder : {"util", "common", "proto", "daemon", "client"})
        for (const auto& entry : fs::recursive_directory_iterator(pybox::test::source_dir() / folder)) {
            const auto extension = entry.path().extension();
            if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".hpp")) continue;
            if (read_text(entry.path()).find("#include <unistd.h>") != std::string::npos)
                including.insert(fs::relative(entry.path(), pybox::test::source_dir()).generic_string());
        }
    std::set<std::string> named;
    for (const auto& word : backticked(chunk_with("`<unistd.h>`")))
        if (word.ends_with(".cpp") || word.ends_with(".hpp")) named.insert(word);
    CHECK(named == including);
}
