// The completion scripts and man pages (packaging/docgen) against the CLI they are made from:
// the test walks pybox's own CLI::App, so a subcommand or flag that a script or the man page
// misses fails here. The scripts are loaded in the real shells (bash, zsh, fish) and asked to
// complete; the man pages must pass groff's lint with every warning on.
#include "client/cli.hpp"
#include "common/files.hpp"
#include "common/process.hpp"
#include "daemon/daemon_cli.hpp"
#include "packaging/docgen/cli_docs.hpp"
#include "packaging/docgen/man_prose.hpp"
#include "tests/support/build_paths.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace {

using namespace pybox;

// What the shells must offer at each command path: its subcommands and its option spellings.
struct Offers {
    std::set<std::string> subcommands;
    std::set<std::string> options;
};
using Tree = std::map<std::string, Offers>;

void walk(const CLI::App& app, const std::string& path, Tree& tree)
{
    auto& node = tree[path];
    for (const auto* option : app.get_options()) {
        for (const auto& name : option->get_lnames()) node.options.insert("--" + name);
        for (const auto& name : option->get_snames()) node.options.insert("-" + name);
    }
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        node.subcommands.insert(sub->get_name());
        walk(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), tree);
    }
}

Tree pybox_tree()
{
    const auto cli = client::make_cli();
    Tree tree;
    walk(cli->app, "", tree);
    return tree;
}

struct TempFile {
    std::filesystem::path path;
    TempFile(const std::string& name, const std::string& text)
        : path(std::filesystem::temp_directory_path() /
               ("pybox-cli-docs-" + std::to_string(reinterpret_cast<std::uintptr_t>(this)) + "-" + name))
    {
        std::ofstream(path) << text;
    }
    ~TempFile() { std::filesystem::remove(path); }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
};

std::string shell_output(const std::vector<std::string>& argv)
{
    const auto result = run_process(argv);
    REQUIRE(result.has_value());
    INFO(result->output);
    REQUIRE(result->exit_code == 0);
    return result->output;
}

// Lines "PATH\tWORD" (what the shell offered at PATH) into a map PATH -> words.
std::map<std::string, std::set<std::string>> offered(const std::string& output)
{
    std::map<std::string, std::set<std::string>> words;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
        const auto tab = line.find('\t');
        if (tab == std::string::npos) continue;
        auto word = line.substr(tab + 1);
        word = word.substr(0, word.find_first_of("\t:"));  // without fish's or zsh's description
        if (!word.empty()) words[line.substr(0, tab)].insert(word);
    }
    return words;
}

// Every path of the tree asked twice: for a word (subcommands) and for "-" (options).
void require_offers_everything(const Tree& tree, const std::map<std::string, std::set<std::string>>& words,
                               const std::map<std::string, std::set<std::string>>& option_words)
{
    for (const auto& [path, expected] : tree) {
        INFO("pybox " << path);
        const auto subs = words.count(path) ? words.at(path) : std::set<std::string>{};
        const auto opts = option_words.count(path) ? option_words.at(path) : std::set<std::string>{};
        for (const auto& sub : expected.subcommands) {
            INFO(sub);
            CHECK(subs.count(sub) == 1);
        }
        for (const auto& option : expected.options) {
            INFO(option);
            CHECK(opts.count(option) == 1);
        }
    }
}

std::string words_of(const std::string& path) { return path.empty() ? "" : path + " "; }

}  // namespace

TEST_CASE("The bash completion offers every subcommand and flag of every pybox command")
{
    const auto cli = client::make_cli();
    const TempFile script("bash", docgen::bash_completion(cli->app));
    const Tree tree = pybox_tree();
    std::string queries = "source '" + script.path.string() + "' || exit 1\n";
    for (const auto& [path, expected] : tree)
        for (const std::string last : {"", "-"})
            queries += "COMP_WORDS=(pybox " + path + " '" + last + "'); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); " +
                       docgen::bash_function_name(cli->app) + "; for w in \"${COMPREPLY[@]}\"; do printf '%s\\t%s\\n' '" +
                       last + path + "' \"$w\"; done\n";
    const auto output = shell_output({"/bin/bash", "--norc", "--noprofile", "-c", queries});
    const auto all = offered(output);
    std::map<std::string, std::set<std::string>> words;
    std::map<std::string, std::set<std::string>> options;
    for (const auto& [key, found] : all) (key.rfind('-', 0) == 0 ? options[key.substr(1)] : words[key]) = found;
    require_offers_everything(tree, words, options);
    CHECK(words[""] == tree.at("").subcommands);
    CHECK(words["vm"] == std::set<std::string>{"start", "status", "stop"});
}

TEST_CASE("The bash completion completes file names after a flag that takes a file")
{
    const auto cli = client::make_cli();
    const TempFile script("bash", docgen::bash_completion(cli->app));
    const TempFile recipe("recipe-for-completion", "format=1\n");
    const std::string prefix = (recipe.path.parent_path() / "pybox-cli-docs-").string();
    const auto output = shell_output(
        {"/bin/bash", "--norc", "--noprofile", "-c",
         "source '" + script.path.string() + "'; COMP_WORDS=(pybox image build own --recipe '" + prefix +
             "'); COMP_CWORD=5; _pybox; printf '%s\\n' \"${COMPREPLY[@]}\""});
    CHECK(output.find(recipe.path.string()) != std::string::npos);
}

TEST_CASE("The zsh completion offers every subcommand and flag of every pybox command")
{
    const auto cli = client::make_cli();
    const TempFile script("_pybox", docgen::zsh_completion(cli->app));
    const Tree tree = pybox_tree();
    // compinit registers the script as a real zsh would; _describe is replaced by a function
    // that prints what it was given, since completion widgets only run inside the line editor.
    std::string queries = "autoload -U compinit && compinit -u -D || exit 1\nsource '" + script.path.string() +
                          "' || exit 1\n[[ ${_comps[pybox]} == _pybox ]] || exit 3\n"
                          "_describe() { local w; for w in \"${(@P)4}\"; do print -r -- \"$query\t$w\"; done }\n"
                          "_files() { }\n";
    for (const auto& [path, expected] : tree)
        for (const std::string last : {"", "-"})
            queries += "query='" + last + path + "'; words=(pybox " + path + " '" + last +
                       "'); CURRENT=${#words}; PREFIX='" + last + "'; _pybox\n";
    const auto output = shell_output({"/usr/bin/zsh", "-f", "-c", queries});
    const auto all = offered(output);
    std::map<std::string, std::set<std::string>> words;
    std::map<std::string, std::set<std::string>> options;
    for (const auto& [key, found] : all) (key.rfind('-', 0) == 0 ? options[key.substr(1)] : words[key]) = found;
    require_offers_everything(tree, words, options);
    CHECK(words["vm"] == std::set<std::string>{"start", "status", "stop"});
}

TEST_CASE("The fish completion offers every subcommand and flag of every pybox command")
{
    const auto cli = client::make_cli();
    const TempFile script("pybox.fish", docgen::fish_completion(cli->app));
    const Tree tree = pybox_tree();
    std::string queries = "source '" + script.path.string() + "'; or exit 1\n";
    for (const auto& [path, expected] : tree)
        for (const std::string last : {"", "-"})
            queries += "for w in (complete -C 'pybox " + words_of(path) + last + "'); printf '%s\\t%s\\n' '" + last +
                       path + "' $w; end\n";
    const auto output = shell_output({"/usr/bin/fish", "--no-config", "-c", queries});
    const auto all = offered(output);
    std::map<std::string, std::set<std::string>> words;
    std::map<std::string, std::set<std::string>> options;
    for (const auto& [key, found] : all) (key.rfind('-', 0) == 0 ? options[key.substr(1)] : words[key]) = found;
    require_offers_everything(tree, words, options);
    CHECK(words["vm"] == std::set<std::string>{"start", "status", "stop"});
}

TEST_CASE("pybox(1) documents every subcommand and flag, and groff finds nothing to warn about")
{
    const auto cli = client::make_cli();
    const std::string page = docgen::man_page(cli->app, docgen::client_man_prose());
    for (const auto& [path, expected] : pybox_tree()) {
        INFO("pybox " << path);
        std::string section = page;
        if (!path.empty()) {
            const auto start = page.find(".SS \"pybox " + path + "\"\n");
            REQUIRE(start != std::string::npos);
            section = page.substr(start, page.find(".SS", start + 1) - start);
        }
        for (const auto& option : expected.options) {
            INFO(option);
            CHECK(section.find("\\fB" + docgen::roff_escape(option) + "\\fR") != std::string::npos);
        }
    }
    const TempFile file("pybox.1", page);
    const auto lint = run_process({"/usr/bin/groff", "-man", "-Tutf8", "-ww", "-z", file.path.string()});
    REQUIRE(lint.has_value());
    INFO(lint->output);
    CHECK(lint->exit_code == 0);
    CHECK(lint->output.empty());
}

TEST_CASE("pyboxd(8) documents pyboxd's options, and groff finds nothing to warn about")
{
    CLI::App daemon;
    daemon::DaemonOptions daemon_options;
    daemon::configure_daemon_cli(daemon, daemon_options);
    const std::string page = docgen::man_page(daemon, docgen::daemon_man_prose());
    CHECK(page.find(".TH PYBOXD 8") != std::string::npos);
    for (const auto* option : daemon.get_options())
        for (const auto& name : option->get_lnames()) CHECK(page.find("\\fB\\-\\-" + name + "\\fR") != std::string::npos);
    const TempFile file("pyboxd.8", page);
    const auto lint = run_process({"/usr/bin/groff", "-man", "-Tutf8", "-ww", "-z", file.path.string()});
    REQUIRE(lint.has_value());
    INFO(lint->output);
    CHECK(lint->exit_code == 0);
    CHECK(lint->output.empty());
}

TEST_CASE("A hidden option or subcommand is left out of the scripts and the man page")
{
    CLI::App app{"tool", "tool"};
    bool shown = false;
    bool secret = false;
    app.add_flag("--shown", shown, "A flag");
    app.add_flag("--secret", secret, "A hidden flag")->group("");
    app.add_subcommand("open", "Shown");
    app.add_subcommand("internal", "Hidden")->group("");
    for (const auto& text : {docgen::bash_completion(app), docgen::zsh_completion(app), docgen::fish_completion(app),
                             docgen::man_page(app, docgen::ManPage{})}) {
        CHECK(text.find("shown") != std::string::npos);
        CHECK(text.find("open") != std::string::npos);
        CHECK(text.find("secret") == std::string::npos);
        CHECK(text.find("internal") == std::string::npos);
    }
}

TEST_CASE("roff_escape guards backslashes, hyphens and a leading dot")
{
    CHECK(docgen::roff_escape("a-b\\c") == "a\\-b\\ec");
    CHECK(docgen::roff_escape(".hidden\n'quote") == "\\&.hidden\n\\&'quote");
}

TEST_CASE("The build's generated completions and man pages are what the CLI says now")
{
    const auto cli = client::make_cli();
    CLI::App daemon;
    daemon::DaemonOptions daemon_options;
    daemon::configure_daemon_cli(daemon, daemon_options);
    const std::filesystem::path dir = pybox::test::generated_docs_dir();
    const std::pair<std::string, std::string> files[] = {
        {"bash/pybox", docgen::bash_completion(cli->app)},
        {"zsh/_pybox", docgen::zsh_completion(cli->app)},
        {"fish/pybox.fish", docgen::fish_completion(cli->app)},
        {"man/pybox.1", docgen::man_page(cli->app, docgen::client_man_prose())},
        {"man/pyboxd.8", docgen::man_page(daemon, docgen::daemon_man_prose())},
    };
    for (const auto& [name, text] : files) {
        INFO(name);
        const auto built = read_file_capped(dir / name, 1 << 20);
        REQUIRE(built.has_value());
        CHECK(*built == text);
    }
}
