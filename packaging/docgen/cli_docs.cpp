#include "packaging/docgen/cli_docs.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <stdexcept>

namespace pybox::docgen {

namespace {

// What the value of an option (or a positional) completes to, from its type name.
enum class ValueKind { none, file, dir, image };

ValueKind value_kind(const CLI::Option& option)
{
    std::string type = option.get_type_name();
    type = type.substr(0, type.find(':'));  // without the validators' descriptions
    if (type == "FILE" || type == "PATH") return ValueKind::file;
    if (type == "DIR") return ValueKind::dir;
    if (type == "IMAGE") return ValueKind::image;
    return ValueKind::none;
}

bool takes_value(const CLI::Option& option) { return option.get_items_expected_max() > 0; }

// One visible command of the tree: its path from the top ("" for the app, "vm start" below).
struct Node {
    std::string path;
    const CLI::App* app = nullptr;
    std::vector<const CLI::App*> subcommands;
    std::vector<const CLI::Option*> named;       // options and flags with a name
    std::vector<const CLI::Option*> positionals;
};

// Names end up inside generated shell code and roff: only letters, digits, '-' and '_'.
const std::string& checked_name(const std::string& name)
{
    const bool safe = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    });
    if (!safe) throw std::invalid_argument("cli_docs: a command or option name the scripts cannot hold: " + name);
    return name;
}

void collect(const CLI::App& app, const std::string& path, std::vector<Node>& nodes)
{
    Node node{path, &app, {}, {}, {}};
    node.subcommands = app.get_subcommands([](const CLI::App* sub) {
        return !sub->get_name().empty() && !sub->get_group().empty();
    });
    for (const auto* option : app.get_options([](const CLI::Option* o) { return !o->get_group().empty(); })) {
        if (option->nonpositional())
            node.named.push_back(option);
        else
            node.positionals.push_back(option);
    }
    nodes.push_back(node);
    for (const auto* sub : node.subcommands)
        collect(*sub, path.empty() ? checked_name(sub->get_name()) : path + " " + checked_name(sub->get_name()),
                nodes);
}

std::vector<Node> walk(const CLI::App& app)
{
    std::vector<Node> nodes;
    collect(app, "", nodes);
    return nodes;
}

// "--json", "-h": every spelling of a named option.
std::vector<std::string> spellings(const CLI::Option& option)
{
    std::vector<std::string> names;
    for (const auto& name : option.get_lnames()) names.push_back("--" + checked_name(name));
    for (const auto& name : option.get_snames()) names.push_back("-" + checked_name(name));
    return names;
}

ValueKind positional_kind(const Node& node)
{
    for (const auto* option : node.positionals)
        if (const auto kind = value_kind(*option); kind != ValueKind::none) return kind;
    return ValueKind::none;
}

std::string child_path(const Node& node, const CLI::App& sub)
{
    return node.path.empty() ? sub.get_name() : node.path + " " + sub.get_name();
}

std::string join(const std::vector<std::string>& words, std::string_view separator)
{
    std::string text;
    for (const auto& word : words) text += (text.empty() ? "" : std::string(separator)) + word;
    return text;
}

// The first line of a description, for a shell's one-line hints.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// Text inside single quotes for sh, zsh and fish ('\'' closes, escapes and reopens in sh and
// zsh; fish takes \' and \\ inside single quotes).
std::string sh_quoted(std::string_view text)
{
    std::string quoted = "'";
    for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

std::string fish_quoted(std::string_view text)
{
    std::string quoted = "'";
    for (const char c : text) {
        if (c == '\'' || c == '\\') quoted += '\\';
        quoted += c;
    }
    return quoted + "'";
}

// The loop every script shares: walks the words before the cursor, following subcommands and
// skipping option values, and leaves the command path in `path_var`. One case arm per step.
struct Step {
    std::string from;  // path so far
    std::string word;  // subcommand name or option spelling
    std::string to;    // the new path, or empty for an option that takes a value
};

std::vector<Step> steps(const std::vector<Node>& nodes)
{
    std::vector<Step> all;
    for (const auto& node : nodes) {
        for (const auto* sub : node.subcommands) all.push_back({node.path, sub->get_name(), child_path(node, *sub)});
        for (const auto* option : node.named)
            if (takes_value(*option))
                for (const auto& spelling : spellings(*option)) all.push_back({node.path, spelling, ""});
    }
    return all;
}

std::string images_command(const CLI::App& app)
{
    return app.get_name() + " image ls 2>/dev/null | awk 'NR > 1 { print $1 }'";
}

}  // namespace

std::string bash_function_name(const CLI::App& app) { return "_" + checked_name(app.get_name()); }

std::string bash_completion(const CLI::App& app)
{
    const auto nodes = walk(app);
    const std::string name = checked_name(app.get_name());
    const std::string function = bash_function_name(app);
    std::string s = "# bash completion for " + name +
                    ", generated from its CLI11 definition by packaging/docgen; do not edit.\n";
    s += function + "_images()\n{\n    " + images_command(app) + "\n}\n\n";
    s += function + "_complete_kind()\n{\n    case $1 in\n";
    s += "        file) compopt -o filenames 2> /dev/null; COMPREPLY+=($(compgen -f -- \"$2\")) ;;\n";
    s += "        dir) compopt -o filenames 2> /dev/null; COMPREPLY+=($(compgen -d -- \"$2\")) ;;\n";
    s += "        image) COMPREPLY+=($(compgen -W \"$(" + function + "_images)\" -- \"$2\")) ;;\n";
    s += "    esac\n}\n\n";
    s += function + "()\n{\n";
    s += "    local cur=${COMP_WORDS[COMP_CWORD]} path=\"\" skip=0 word i subs opts positional\n";
    s += "    COMPREPLY=()\n";
    s += "    for ((i = 1; i < COMP_CWORD; i++)); do\n";
    s += "        word=${COMP_WORDS[i]}\n";
    s += "        if ((skip)); then skip=0; continue; fi\n";
    s += "        case \"$path|$word\" in\n";
    for (const auto& step : steps(nodes))
        s += "            \"" + step.from + "|" + step.word + "\") " +
             (step.to.empty() ? std::string("skip=1") : "path=\"" + step.to + "\"") + " ;;\n";
    s += "        esac\n    done\n";
    s += "    if ((skip)); then\n        case \"$path|${COMP_WORDS[COMP_CWORD - 1]}\" in\n";
    for (const auto& node : nodes)
        for (const auto* option : node.named) {
            if (!takes_value(*option)) continue;
            const auto kind = value_kind(*option);
            if (kind == ValueKind::none) continue;
            for (const auto& spelling : spellings(*option))
                s += "            \"" + node.path + "|" + spelling + "\") " + function + "_complete_kind " +
                     (kind == ValueKind::file ? "file" : kind == ValueKind::dir ? "dir" : "image") +
                     " \"$cur\" ;;\n";
        }
    s += "        esac\n        return 0\n    fi\n";
    s += "    case \"$path\" in\n";
    for (const auto& node : nodes) {
        std::vector<std::string> subs;
        std::vector<std::string> opts;
        for (const auto* sub : node.subcommands) subs.push_back(sub->get_name());
        for (const auto* option : node.named)
            for (const auto& spelling : spellings(*option)) opts.push_back(spelling);
        const auto kind = positional_kind(node);
        s += "        \"" + node.path + "\") subs=\"" + join(subs, " ") + "\" opts=\"" + join(opts, " ") +
             "\" positional=" + (kind == ValueKind::file ? "file" : kind == ValueKind::dir ? "dir"
                                                             : kind == ValueKind::image   ? "image"
                                                                                          : "none") +
             " ;;\n";
    }
    s += "    esac\n";
    s += "    if [[ $cur == -* ]]; then\n";
    s += "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n";
    s += "    else\n";
    s += "        COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n";
    s += "        " + function + "_complete_kind \"$positional\" \"$cur\"\n";
    s += "    fi\n    return 0\n}\n\n";
    s += "complete -F " + function + " " + name + "\n";
    return s;
}

std::string zsh_completion(const CLI::App& app)
{
    const auto nodes = walk(app);
    const std::string name = checked_name(app.get_name());
    const std::string function = "_" + name;
    // zsh's _describe splits "name:description" at the first unescaped ':'.
    const auto described = [](const std::string& word, const std::string& description) {
        std::string escaped;
        for (const char c : first_line(description)) escaped += c == ':' ? std::string("\\:") : std::string(1, c);
        return sh_quoted(word + ":" + escaped);
    };
    const auto kind_action = [&](ValueKind kind) -> std::string {
        switch (kind) {
        case ValueKind::file: return "_files";
        case ValueKind::dir: return "_files -/";
        case ValueKind::image: return "compadd -- ${(f)\"$(" + images_command(app) + ")\"}";
        case ValueKind::none: break;
        }
        return ":";
    };
    std::string s = "#compdef " + name + "\n# zsh completion for " + name +
                    ", generated from its CLI11 definition by packaging/docgen; do not edit.\n\n";
    s += function + "() {\n";
    s += "    local cmd_path='' word i skip=0 positional=none\n";
    s += "    local -a subs opts\n";
    s += "    for ((i = 2; i < CURRENT; i++)); do\n";
    s += "        word=${words[i]}\n";
    s += "        if ((skip)); then skip=0; continue; fi\n";
    s += "        case \"$cmd_path|$word\" in\n";
    for (const auto& step : steps(nodes))
        s += "            (" + sh_quoted(step.from + "|" + step.word) + ") " +
             (step.to.empty() ? std::string("skip=1") : "cmd_path=" + sh_quoted(step.to)) + " ;;\n";
    s += "        esac\n    done\n";
    s += "    if ((skip)); then\n        case \"$cmd_path|${words[CURRENT - 1]}\" in\n";
    for (const auto& node : nodes)
        for (const auto* option : node.named) {
            if (!takes_value(*option)) continue;
            for (const auto& spelling : spellings(*option))
                s += "            (" + sh_quoted(node.path + "|" + spelling) + ") " + kind_action(value_kind(*option)) +
                     " ;;\n";
        }
    s += "        esac\n        return 0\n    fi\n";
    s += "    case \"$cmd_path\" in\n";
    for (const auto& node : nodes) {
        std::vector<std::string> subs;
        std::vector<std::string> opts;
        for (const auto* sub : node.subcommands) subs.push_back(described(sub->get_name(), sub->get_description()));
        for (const auto* option : node.named)
            for (const auto& spelling : spellings(*option))
                opts.push_back(described(spelling, option->get_description()));
        const auto kind = positional_kind(node);
        s += "        (" + sh_quoted(node.path) + ")\n            subs=(" + join(subs, " ") + ")\n            opts=(" +
             join(opts, " ") + ")\n            positional=" +
             (kind == ValueKind::file ? "file" : kind == ValueKind::dir ? "dir" : kind == ValueKind::image ? "image"
                                                                                                           : "none") +
             " ;;\n";
    }
    s += "    esac\n";
    s += "    if [[ $PREFIX == -* ]]; then\n";
    s += "        _describe -t options option opts\n";
    s += "        return 0\n    fi\n";
    s += "    ((${#subs})) && _describe -t commands command subs\n";
    s += "    case $positional in\n";
    for (const auto kind : {ValueKind::file, ValueKind::dir, ValueKind::image})
        s += std::string("        (") + (kind == ValueKind::file ? "file" : kind == ValueKind::dir ? "dir" : "image") +
             ") " + kind_action(kind) + " ;;\n";
    s += "    esac\n    return 0\n}\n\n";
    s += "if [[ ${funcstack[1]-} == " + function + " ]]; then\n    " + function + " \"$@\"\nelse\n    compdef " +
         function + " " + name + "\nfi\n";
    return s;
}

std::string fish_completion(const CLI::App& app)
{
    const auto nodes = walk(app);
    const std::string name = checked_name(app.get_name());
    const std::string helper = "__" + name + "_path";
    std::string s = "# fish completion for " + name +
                    ", generated from its CLI11 definition by packaging/docgen; do not edit.\n\n";
    s += "function " + helper + "\n";
    s += "    set -l words (commandline -opc)\n";
    s += "    set -l path ''\n    set -l skip 0\n";
    s += "    for word in $words[2..-1]\n";
    s += "        if test $skip = 1\n            set skip 0\n            continue\n        end\n";
    s += "        switch \"$path|$word\"\n";
    for (const auto& step : steps(nodes))
        s += "            case " + fish_quoted(step.from + "|" + step.word) + "\n                " +
             (step.to.empty() ? std::string("set skip 1") : "set path " + fish_quoted(step.to)) + "\n";
    s += "        end\n    end\n    echo $path\nend\n\n";
    s += "function " + helper + "_is\n    set -l path (" + helper + ")\n    test \"$path\" = \"$argv\"\nend\n\n";
    s += "complete -c " + name + " -f\n";
    const auto kind_flags = [&](ValueKind kind) -> std::string {
        switch (kind) {
        case ValueKind::file: return " -F";
        case ValueKind::dir: return " -a '(__fish_complete_directories (commandline -ct))'";
        case ValueKind::image: return " -a " + fish_quoted("(" + images_command(app) + ")");
        case ValueKind::none: break;
        }
        return "";
    };
    for (const auto& node : nodes) {
        const std::string condition = " -n " + fish_quoted(helper + "_is " + node.path);
        for (const auto* sub : node.subcommands)
            s += "complete -c " + name + condition + " -a " + fish_quoted(sub->get_name()) + " -d " +
                 fish_quoted(first_line(sub->get_description())) + "\n";
        for (const auto* option : node.named) {
            std::string line = "complete -c " + name + condition;
            for (const auto& long_name : option->get_lnames()) line += " -l " + long_name;
            for (const auto& short_name : option->get_snames()) line += " -s " + short_name;
            if (takes_value(*option)) line += " -r" + kind_flags(value_kind(*option));
            s += line + " -d " + fish_quoted(first_line(option->get_description())) + "\n";
        }
        if (const auto kind = positional_kind(node); kind != ValueKind::none)
            s += "complete -c " + name + condition + kind_flags(kind) + "\n";
    }
    return s;
}

std::string roff_escape(std::string_view text)
{
    std::string escaped;
    bool line_start = true;
    for (const char c : text) {
        if (line_start && (c == '.' || c == '\'')) escaped += "\\&";
        if (c == '\\')
            escaped += "\\e";
        else if (c == '-')
            escaped += "\\-";
        else
            escaped += c;
        line_start = c == '\n';
    }
    return escaped;
}

namespace {

// A description as one filled paragraph (CLI11 descriptions wrap by hand with '\n').
std::string paragraph(const std::string& text)
{
    std::string joined = text;
    std::replace(joined.begin(), joined.end(), '\n', ' ');
    return roff_escape(joined) + "\n";
}

std::string option_synopsis(const CLI::Option& option)
{
    std::vector<std::string> names;
    for (const auto& spelling : spellings(option)) names.push_back("\\fB" + roff_escape(spelling) + "\\fR");
    std::string text = join(names, ", ");
    if (takes_value(option)) {
        std::string type = option.get_type_name();
        text += " \\fI" + roff_escape(type.substr(0, type.find(':'))) + "\\fR";
    }
    return text;
}

std::string options_list(const Node& node)
{
    std::string s;
    for (const auto* option : node.positionals)
        s += ".TP\n\\fI" + roff_escape(option->get_name()) + "\\fR\n" + paragraph(option->get_description());
    for (const auto* option : node.named) s += ".TP\n" + option_synopsis(*option) + "\n" + paragraph(option->get_description());
    return s;
}

std::string command_synopsis(const CLI::App& top, const Node& node)
{
    std::string s = "\\fB" + roff_escape(top.get_name() + (node.path.empty() ? "" : " " + node.path)) + "\\fR";
    if (!node.named.empty()) s += " [\\fIoptions\\fR]";
    for (const auto* option : node.positionals) s += " \\fI" + roff_escape(option->get_name()) + "\\fR";
    if (!node.subcommands.empty()) s += " \\fIcommand\\fR";
    return s;
}

std::string upper(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return text;
}

}  // namespace

std::string man_page(const CLI::App& app, const ManPage& page)
{
    const auto nodes = walk(app);
    const std::string name = checked_name(app.get_name());
    std::string s = ".\\\" " + name + "(" + std::to_string(page.section) +
                    "), generated from its CLI11 definition by packaging/docgen; do not edit.\n";
    s += ".TH " + upper(name) + " " + std::to_string(page.section) + " \"\" \"" + roff_escape(page.version) +
         "\" \"" + roff_escape(page.manual) + "\"\n";
    s += ".SH NAME\n" + roff_escape(name) + " \\- " + roff_escape(page.summary) + "\n";
    s += ".SH SYNOPSIS\n";
    for (const auto& node : nodes)
        if (node.subcommands.empty() || node.path.empty()) s += command_synopsis(app, node) + "\n.br\n";
    for (const auto& section : page.before_commands) s += ".SH " + section.title + "\n" + section.roff;
    s += ".SH OPTIONS\n" + paragraph(app.get_description()) + options_list(nodes.front());
    if (nodes.size() > 1) {
        s += ".SH COMMANDS\n";
        for (std::size_t i = 1; i < nodes.size(); ++i) {
            const auto& node = nodes[i];
            s += ".SS \"" + roff_escape(name + " " + node.path) + "\"\n";
            s += command_synopsis(app, node) + "\n.PP\n" + paragraph(node.app->get_description());
            s += options_list(node);
            if (const auto footer = node.app->get_footer(); !footer.empty() && footer != "\n")
                s += ".PP\n.nf\n" + roff_escape(footer) + (footer.back() == '\n' ? "" : "\n") + ".fi\n";
        }
    }
    for (const auto& section : page.after_commands) s += ".SH " + section.title + "\n" + section.roff;
    return s;
}

}  // namespace pybox::docgen
