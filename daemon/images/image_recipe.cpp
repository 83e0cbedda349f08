#include "daemon/images/image_recipe.hpp"

#include "common/api_error_codes.hpp"
#include "common/data_dir.hpp"
#include "common/files.hpp"
#include "common/sha256.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <system_error>

namespace pybox::images {

namespace {

constexpr std::size_t k_max_line_bytes = 1024;
constexpr std::size_t k_max_sources = 8;
constexpr std::size_t k_max_components = 8;
constexpr std::size_t k_max_includes = 256;
constexpr std::size_t k_max_lock_entries = 4096;
constexpr std::int64_t k_max_source_date_epoch = 4'102'444'800;  // 2100-01-01

constexpr std::string_view k_recipe_keys[] = {"format", "variant", "source", "include",
                                              "source_date_epoch"};
constexpr std::string_view k_variants[] = {"essential", "apt", "required", "minbase",
                                           "important", "standard"};

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_alnum(char c) { return is_lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

// Suites and components: lower-case letters, digits, '-', '.', '/' (e.g. "bookworm-security").
bool is_valid_archive_word(std::string_view word)
{
    return !word.empty() && word.size() <= 64 && is_lower_alnum(word.front()) &&
           std::all_of(word.begin(), word.end(),
                       [](char c) { return is_lower_alnum(c) || c == '-' || c == '.' || c == '/'; });
}

// http(s)://host[:port][/path]: no spaces, quotes, brackets or shell metacharacters.
bool is_valid_uri(std::string_view uri)
{
    std::string_view rest;
    if (uri.starts_with("http://")) {
        rest = uri.substr(7);
    } else if (uri.starts_with("https://")) {
        rest = uri.substr(8);
    } else {
        return false;
    }
    return !rest.empty() && uri.size() <= 256 && is_alnum(rest.front()) &&
           std::all_of(rest.begin(), rest.end(), [](char c) {
               return is_alnum(c) || std::string_view("-._~/:%+").find(c) != std::string_view::npos;
           });
}

std::vector<std::string_view> split_words(std::string_view text)
{
    std::vector<std::string_view> words;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = std::min(text.find(' ', at), text.size());
        words.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    return words;
}

// One line of a recipe or lock file, with its 1-based number for messages.
struct Line {
    std::size_t number;
    std::string_view text;
};

// Splits into lines, skipping blank and '#' lines. Refuses NUL, CR, tabs and other control
// bytes, non-ASCII bytes, and over-long lines, so what the parsers accept is plain ASCII.
Expected<std::vector<Line>> significant_lines(std::string_view text, std::string_view what,
                                              const char* code)
{
    std::vector<Line> lines;
    std::size_t number = 0;
    std::size_t at = 0;
    while (at < text.size()) {
        ++number;
        const std::size_t end = std::min(text.find('\n', at), text.size());
        const std::string_view line = text.substr(at, end - at);
        at = end + 1;
        if (line.size() > k_max_line_bytes) {
            return make_error(code, std::string(what) + " line " + std::to_string(number) +
                                        " is longer than " + std::to_string(k_max_line_bytes) + " bytes.");
        }
        const auto bad = std::find_if(line.begin(), line.end(), [](char c) {
            const auto byte = static_cast<unsigned char>(c);
            return byte < 0x20 || byte > 0x7e;
        });
        if (bad != line.end()) {
            return make_error(code, std::string(what) + " line " + std::to_string(number) +
                                        " holds a control or non-ASCII byte.");
        }
        if (line.empty() || line.front() == '#') {
            continue;
        }
        lines.push_back(Line{number, line});
    }
    return lines;
}

Error line_error(const char* code, std::string_view what, std::size_t number, std::string_view why)
{
    return make_error(code, std::string(what) + " line " + std::to_string(number) + ": " + std::string(why));
}

Expected<AptSource> parse_source(std::string_view value, std::size_t number)
{
    const auto words = split_words(value);
    if (words.size() < 3 || words.size() > 2 + k_max_components) {
        return line_error(api_error::k_recipe_invalid, "recipe", number,
                          "a source is `URI SUITE COMPONENT...` separated by single spaces.");
    }
    if (!is_valid_uri(words[0])) {
        return line_error(api_error::k_recipe_invalid, "recipe", number,
                          "the source URI must be http:// or https:// without spaces or quotes.");
    }
    AptSource source{std::string(words[0]), std::string(words[1]), {}};
    for (std::size_t i = 1; i < words.size(); ++i) {
        if (!is_valid_archive_word(words[i])) {
            return line_error(api_error::k_recipe_invalid, "recipe", number,
                              "suite and component names are lower-case letters, digits, '-', '.' and '/'.");
        }
        if (i >= 2) {
            source.components.emplace_back(words[i]);
        }
    }
    return source;
}

}  // namespace

bool is_valid_image_name(std::string_view name)
{
    return !name.empty() && name.size() <= 32 && name.front() >= 'a' && name.front() <= 'z' &&
           std::all_of(name.begin(), name.end(),
                       [](char c) { return is_lower_alnum(c) || c == '_' || c == '-'; });
}

bool is_valid_package_name(std::string_view name)
{
    return name.size() >= 2 && name.size() <= 128 && is_lower_alnum(name.front()) &&
           std::all_of(name.begin(), name.end(),
                       [](char c) { return is_lower_alnum(c) || c == '+' || c == '-' || c == '.'; });
}

bool is_valid_package_version(std::string_view version)
{
    if (version.empty() || version.size() > 128) {
        return false;
    }
    std::string_view upstream = version;
    if (const auto colon = version.find(':'); colon != std::string_view::npos) {
        const std::string_view epoch = version.substr(0, colon);
        if (epoch.empty() || epoch.size() > 9 ||
            !std::all_of(epoch.begin(), epoch.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            return false;
        }
        upstream = version.substr(colon + 1);
    }
    return !upstream.empty() && upstream.front() >= '0' && upstream.front() <= '9' &&
           std::all_of(upstream.begin(), upstream.end(), [](char c) {
               return is_alnum(c) || c == '.' || c == '+' || c == '-' || c == '~' || c == ':';
           });
}

bool is_valid_sha256_hex(std::string_view text)
{
    return text.size() == 64 &&
           std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Expected<Recipe> parse_recipe(std::string_view text)
{
    if (text.size() > k_max_recipe_bytes) {
        return make_error(api_error::k_recipe_invalid, "The recipe is larger than " +
                                                std::to_string(k_max_recipe_bytes) + " bytes.");
    }
    auto lines = significant_lines(text, "recipe", api_error::k_recipe_invalid);
    if (!lines) {
        return lines.error();
    }
    Recipe recipe;
    std::set<std::string_view> seen;
    std::set<std::string> includes;
    for (const Line& line : *lines) {
        const std::size_t eq = line.text.find('=');
        if (eq == std::string_view::npos) {
            return line_error(api_error::k_recipe_invalid, "recipe", line.number, "expected key=value.");
        }
        const std::string_view key = line.text.substr(0, eq);
        const std::string_view value = line.text.substr(eq + 1);
        if (std::find(std::begin(k_recipe_keys), std::end(k_recipe_keys), key) == std::end(k_recipe_keys)) {
            return line_error(api_error::k_recipe_invalid, "recipe", line.number,
                              "unknown key \"" + std::string(key) + "\".");
        }
        const bool repeatable = key == "source" || key == "include";
        if (!seen.insert(key).second && !repeatable) {
            return line_error(api_error::k_recipe_invalid, "recipe", line.number,
                              "\"" + std::string(key) + "\" is given twice.");
        }
        if (key == "format") {
            if (value != "1") {
                return line_error(api_error::k_recipe_invalid, "recipe", line.number, "only format=1 is known.");
            }
        } else if (key == "variant") {
            if (std::find(std::begin(k_variants), std::end(k_variants), value) == std::end(k_variants)) {
                return line_error(api_error::k_recipe_invalid, "recipe", line.number,
                                  "variant must be one of essential, apt, required, minbase, important, standard.");
            }
            recipe.variant = std::string(value);
        } else if (key == "source") {
            if (recipe.sources.size() == k_max_sources) {
                return line_error(api_error::k_recipe_invalid, "recipe", line.number, "too many sources.");
            }
            auto source = parse_source(value, line.number);
            if (!source) {
                return source.error();
            }
            recipe.sources.push_back(std::move(*source));
        } else if (key == "include") {
            if (!is_valid_package_name(value)) {
                return line_error(api_error::k_recipe_invalid, "recipe", line.number,
                                  "\"" + std::string(value) + "\" is not a Debian package name.");
            }
            if (!includes.insert(std::string(value)).second || includes.size() > k_max_includes) {
                return line_error(api_error::k_recipe_invalid, "recipe", line.number,
                                  "packages are included once each, at most " +
                                      std::to_string(k_max_includes) + ".");
            }
        } else {  // source_date_epoch
            std::int64_t epoch = 0;
            const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), epoch);
            if (ec != std::errc{} || end != value.data() + value.size() || value.front() == '0' ||
                epoch <= 0 || epoch > k_max_source_date_epoch) {
                return line_error(api_error::k_recipe_invalid, "recipe", line.number,
                                  "source_date_epoch must be a positive decimal Unix time.");
            }
            recipe.source_date_epoch = epoch;
        }
    }
    for (const std::string_view key : k_recipe_keys) {
        if (!seen.contains(key)) {
            return make_error(api_error::k_recipe_invalid, "The recipe has no \"" + std::string(key) + "\" line.");
        }
    }
    recipe.includes.assign(includes.begin(), includes.end());
    return recipe;
}

Expected<OwnRecipe> parse_own_recipe(std::string_view text)
{
    if (text.size() > k_max_recipe_bytes) {
        return make_error(api_error::k_own_recipe_invalid, "The recipe is larger than " + std::to_string(k_max_recipe_bytes) + " bytes.");
    }
    auto lines = significant_lines(text, "recipe", api_error::k_own_recipe_invalid);
    if (!lines) {
        return lines.error();
    }
    OwnRecipe recipe;
    bool has_format = false;
    std::set<std::string> includes;
    for (const Line& line : *lines) {
        const std::size_t eq = line.text.find('=');
        const std::string_view key = line.text.substr(0, eq);
        const std::string_view value = eq == std::string_view::npos ? "" : line.text.substr(eq + 1);
        if (eq == std::string_view::npos) {
            return line_error(api_error::k_own_recipe_invalid, "recipe", line.number, "expected key=value.");
        }
        if (key == "format") {
            if (has_format || value != "1") {
                return line_error(api_error::k_own_recipe_invalid, "recipe", line.number, "format=1 is given once.");
            }
            has_format = true;
        } else if (key == "base") {
            if (!recipe.base.empty() || value != "stdlib") {
                return line_error(api_error::k_own_recipe_invalid, "recipe", line.number, "base=stdlib is given once (the only base).");
            }
            recipe.base = std::string(value);
        } else if (key == "include") {
            if (!is_valid_package_name(value)) {
                return line_error(api_error::k_own_recipe_invalid, "recipe", line.number,
                                  "\"" + std::string(value) + "\" is not a Debian package name.");
            }
            if (!includes.insert(std::string(value)).second || includes.size() > k_max_own_includes) {
                return line_error(api_error::k_own_recipe_invalid, "recipe", line.number,
                                  "packages are included once each, at most " +
                                      std::to_string(k_max_own_includes) + ".");
            }
        } else {
            return line_error(api_error::k_own_recipe_invalid, "recipe", line.number,
                              "unknown key \"" + std::string(key) + "\"; an own recipe has format, base and include.");
        }
    }
    if (!has_format || recipe.base.empty() || includes.empty()) {
        return make_error(api_error::k_own_recipe_invalid, "An own recipe needs format=1, base=stdlib and at least one include= line.");
    }
    recipe.includes.assign(includes.begin(), includes.end());
    return recipe;
}

Recipe own_image_recipe(const Recipe& base, const OwnRecipe& own)
{
    Recipe recipe = base;
    std::set<std::string> includes(base.includes.begin(), base.includes.end());
    includes.insert(own.includes.begin(), own.includes.end());
    recipe.includes.assign(includes.begin(), includes.end());
    return recipe;
}

Expected<Lock> parse_lock(std::string_view text)
{
    if (text.size() > k_max_lock_bytes) {
        return make_error(api_error::k_lock_invalid, "The lock file is larger than " +
                                              std::to_string(k_max_lock_bytes) + " bytes.");
    }
    auto lines = significant_lines(text, "lock file", api_error::k_lock_invalid);
    if (!lines) {
        return lines.error();
    }
    Lock lock;
    for (const Line& line : *lines) {
        const std::size_t eq = line.text.find('=');
        const std::size_t space = line.text.find(' ');
        if (eq == std::string_view::npos || space == std::string_view::npos || space < eq) {
            return line_error(api_error::k_lock_invalid, "lock file", line.number, "expected package=version SHA256.");
        }
        const std::string_view name = line.text.substr(0, eq);
        const std::string_view version = line.text.substr(eq + 1, space - eq - 1);
        const std::string_view sha256 = line.text.substr(space + 1);
        if (!is_valid_package_name(name) || !is_valid_package_version(version)) {
            return line_error(api_error::k_lock_invalid, "lock file", line.number,
                              "\"" + std::string(line.text.substr(0, space)) + "\" is not a Debian package=version.");
        }
        if (!is_valid_sha256_hex(sha256)) {
            return line_error(api_error::k_lock_invalid, "lock file", line.number,
                              "the SHA-256 of " + std::string(name) + " is not 64 lower-case hex digits.");
        }
        if (lock.size() == k_max_lock_entries) {
            return line_error(api_error::k_lock_invalid, "lock file", line.number, "too many packages.");
        }
        if (!lock.emplace(name, LockedPackage{std::string(version), std::string(sha256)}).second) {
            return line_error(api_error::k_lock_invalid, "lock file", line.number,
                              "\"" + std::string(name) + "\" is pinned twice.");
        }
    }
    if (lock.empty()) {
        return make_error(api_error::k_lock_invalid, "The lock file pins no packages.");
    }
    return lock;
}

std::string render_lock_file(std::string_view image_name, const Lock& lock)
{
    std::string text = "# Pinned packages of the \"" + std::string(image_name) +
                       "\" image, written by `pybox setup --refresh-lock`.\n"
                       "# Every package the image holds, as package=version and the SHA-256 of its .deb.\n"
                       "# Commit with the recipe.\n";
    for (const auto& [name, pin] : lock) {
        text += name + "=" + pin.version + " " + pin.sha256 + "\n";
    }
    return text;
}

std::string image_spec_text(std::string_view image_name, const Recipe& recipe, const Lock& lock)
{
    std::string text = "pybox-image-spec " + std::to_string(k_image_builder_version) + "\nname=" +
                       std::string(image_name) + "\n[recipe]\nformat=1\nvariant=" + recipe.variant + "\n";
    for (const AptSource& source : recipe.sources) {
        text += "source=" + source.uri + " " + source.suite;
        for (const std::string& component : source.components) {
            text += " " + component;
        }
        text += "\n";
    }
    for (const std::string& include : recipe.includes) {
        text += "include=" + include + "\n";
    }
    text += "source_date_epoch=" + std::to_string(recipe.source_date_epoch) + "\n[lock]\n";
    for (const auto& [name, pin] : lock) {
        text += name + "=" + pin.version + " " + pin.sha256 + "\n";
    }
    return text;
}

std::string pinned_image_spec_text(std::string_view image_name, std::string_view reference)
{
    return "pybox-pinned-image 1\nname=" + std::string(image_name) + "\nreference=" + std::string(reference) + "\n";
}

std::string image_spec_sha256(std::string_view image_name, const Recipe& recipe, const Lock& lock)
{
    return sha256_hex(image_spec_text(image_name, recipe, lock));
}

Expected<std::filesystem::path> installed_recipes_dir()
{
    return data_subdir("images");
}

std::filesystem::path recipe_file(const std::filesystem::path& source_dir, std::string_view image_name)
{
    return source_dir / std::string(image_name) / "recipe";
}

std::filesystem::path lock_file(const std::filesystem::path& source_dir, std::string_view image_name)
{
    return source_dir / std::string(image_name) / "lock";
}

Expected<RecipeFiles> load_recipe_files(const std::filesystem::path& source_dir,
                                        std::string_view image_name)
{
    if (!is_valid_image_name(image_name)) {
        return make_error(api_error::k_unknown_image, "\"" + std::string(image_name) + "\" is not an image name.");
    }
    auto recipe_text = read_file_capped(recipe_file(source_dir, image_name), k_max_recipe_bytes);
    if (!recipe_text) {
        if (recipe_text.error().code == api_error::k_file_missing) {
            return make_error(api_error::k_unknown_image, "There is no recipe for an image named \"" +
                                                   std::string(image_name) + "\" in " +
                                                   source_dir.string() + ".");
        }
        return recipe_text.error();
    }
    auto recipe = parse_recipe(*recipe_text);
    if (!recipe) {
        return make_error(recipe.error().code,
                          recipe_file(source_dir, image_name).string() + ": " + recipe.error().message);
    }
    RecipeFiles files{std::move(*recipe), std::nullopt};
    auto lock_text = read_file_capped(lock_file(source_dir, image_name), k_max_lock_bytes);
    if (!lock_text) {
        if (lock_text.error().code == api_error::k_file_missing) {
            return files;
        }
        return lock_text.error();
    }
    auto lock = parse_lock(*lock_text);
    if (!lock) {
        return make_error(lock.error().code,
                          lock_file(source_dir, image_name).string() + ": " + lock.error().message);
    }
    files.lock = std::move(*lock);
    return files;
}

std::vector<std::string> list_recipes(const std::filesystem::path& source_dir)
{
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(source_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (is_valid_image_name(name) && std::filesystem::is_regular_file(entry.path() / "recipe", ec)) {
            names.push_back(name);
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace pybox::images
