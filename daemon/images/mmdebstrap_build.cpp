#include "daemon/images/mmdebstrap_build.hpp"

#include "common/process.hpp"

#include <system_error>

namespace pybox::images {

namespace {

constexpr std::string_view k_installed_prefix = "pybox-installed ";
constexpr std::string_view k_python_ok = "pybox-python-ok";
constexpr std::string_view k_pins_file = "/etc/apt/preferences.d/pybox-lock.pref";
constexpr std::size_t k_max_build_output = 4 * 1024 * 1024;
constexpr std::size_t k_output_tail_bytes = 600;
constexpr std::size_t k_max_listed_differences = 5;

std::string refresh_hint(std::string_view lock_display_path)
{
    return "Refresh the lock with: pybox setup --refresh-lock (then commit the new " +
           std::string(lock_display_path) + ").";
}

// Writes apt preferences that make each pinned version the candidate (priority > 1000, so
// the essential set apt picks first already has the pinned versions). Every name and version
// was checked by parse_lock, so single quotes cannot occur in them.
std::string pins_hook(const Lock& pins)
{
    std::string hook = "mkdir -p \"$1/etc/apt/preferences.d\" && printf '%s\\n'";
    for (const auto& [name, version] : pins) {
        hook += " 'Package: " + name + "' 'Pin: version " + version + "' 'Pin-Priority: 1001' ''";
    }
    hook += " > \"$1" + std::string(k_pins_file) + "\"";
    return hook;
}

// Drops what differs between a pinned and an unpinned build of the same versions (the pins
// and apt's auto-installed marks; the image has no apt) and the host's /etc/resolv.conf and
// /etc/hostname that mmdebstrap copies in (nothing of the build host goes into the image),
// reports what the image holds, and proves that python3 starts in it.
std::string report_hook()
{
    const std::string drop = "rm -f \"$1" + std::string(k_pins_file) + "\" \"$1/var/lib/apt/extended_states\" "
                             "\"$1/etc/resolv.conf\" && echo pybox > \"$1/etc/hostname\"";
    const std::string report = "chroot \"$1\" dpkg-query -W -f='" + std::string(k_installed_prefix) +
                               "${db:Status-Abbrev}${Package}=${Version}\\n'";
    const std::string python = "chroot \"$1\" /usr/bin/timeout -s KILL 20 /usr/bin/python3 -I -B -u -c 'print(\"" +
                               std::string(k_python_ok) + "\")'";
    return drop + " && " + report + " && " + python;
}

std::string output_tail(std::string_view output)
{
    const std::string_view tail =
        output.size() > k_output_tail_bytes ? output.substr(output.size() - k_output_tail_bytes) : output;
    return std::string(tail);
}

}  // namespace

std::vector<std::string> mmdebstrap_argv(const BuildRequest& request)
{
    const Recipe& recipe = request.recipe;
    std::string include;
    for (const std::string& name : recipe.includes) {
        include += (include.empty() ? "" : ",") + name;
    }
    if (request.pins) {
        for (const auto& [name, version] : *request.pins) {
            include += "," + name + "=" + version;
        }
    }
    // apt downloads as root always: whether it could drop to _apt depends on TMPDIR's
    // permissions and would change the owner of folders in the image.
    std::vector<std::string> argv{k_mmdebstrap, "--variant=" + recipe.variant, "--format=tar",
                                  "--aptopt=APT::Sandbox::User \"root\"", "--include=" + include};
    if (request.pins) {
        argv.push_back("--setup-hook=" + pins_hook(*request.pins));
    }
    argv.push_back("--customize-hook=" + report_hook());
    // An empty SUITE lets the essential set come from every source (updates, security),
    // not only from the first suite.
    argv.emplace_back("");
    argv.push_back(request.tar_file.string());
    for (const AptSource& source : recipe.sources) {
        std::string line = "deb " + source.uri + " " + source.suite;
        for (const std::string& component : source.components) {
            line += " " + component;
        }
        argv.push_back(std::move(line));
    }
    return argv;
}

Expected<Lock> parse_build_report(std::string_view output)
{
    Lock installed;
    bool python_ok = false;
    std::size_t at = 0;
    while (at < output.size()) {
        const std::size_t end = std::min(output.find('\n', at), output.size());
        const std::string_view line = output.substr(at, end - at);
        at = end + 1;
        if (line == k_python_ok) {
            python_ok = true;
            continue;
        }
        if (!line.starts_with(k_installed_prefix)) {
            continue;
        }
        const std::string_view entry = line.substr(k_installed_prefix.size());
        const std::string_view status = entry.substr(0, 3);
        const std::string_view package = entry.substr(std::min<std::size_t>(3, entry.size()));
        const std::size_t eq = package.find('=');
        const std::string_view name = package.substr(0, eq);
        const std::string_view version = eq == std::string_view::npos ? std::string_view{} : package.substr(eq + 1);
        if (!is_valid_package_name(name) || !is_valid_package_version(version)) {
            return make_error("image_build_failed",
                              "The build reported an unreadable package line: " + std::string(line) + ".");
        }
        if (status != "ii ") {
            return make_error("image_build_failed", "The package " + std::string(name) +
                                                        " is not fully installed in the image (dpkg status \"" +
                                                        std::string(status) + "\").");
        }
        if (!installed.emplace(name, version).second) {
            return make_error("image_build_failed",
                              "The build reported the package " + std::string(name) + " twice.");
        }
    }
    if (installed.empty()) {
        return make_error("image_build_failed", "The build did not report the installed packages.");
    }
    if (!python_ok) {
        return make_error("image_build_failed", "python3 did not start inside the built image.");
    }
    return installed;
}

std::optional<MissingPin> find_missing_pin(std::string_view output)
{
    constexpr std::string_view k_start = "Version '";
    constexpr std::string_view k_middle = "' for '";
    constexpr std::string_view k_end = "' was not found";
    for (std::size_t at = output.find(k_start); at != std::string_view::npos;
         at = output.find(k_start, at + 1)) {
        const std::size_t version_at = at + k_start.size();
        const std::size_t middle = output.find(k_middle, version_at);
        if (middle == std::string_view::npos) {
            break;
        }
        const std::size_t name_at = middle + k_middle.size();
        const std::size_t end = output.find(k_end, name_at);
        if (end == std::string_view::npos) {
            break;
        }
        const std::string_view version = output.substr(version_at, middle - version_at);
        const std::string_view name = output.substr(name_at, end - name_at);
        if (is_valid_package_name(name) && is_valid_package_version(version)) {
            return MissingPin{std::string(name), std::string(version)};
        }
    }
    return std::nullopt;
}

std::optional<Error> compare_with_lock(const Lock& pins, const Lock& built, std::string_view lock_display_path)
{
    std::vector<std::string> differences;
    for (const auto& [name, version] : pins) {
        const auto found = built.find(name);
        if (found == built.end()) {
            differences.push_back(name + "=" + version + " is missing");
        } else if (found->second != version) {
            differences.push_back(name + " is " + found->second + ", not " + version);
        }
    }
    for (const auto& [name, version] : built) {
        if (!pins.contains(name)) {
            differences.push_back(name + "=" + version + " is not in the lock");
        }
    }
    if (differences.empty()) {
        return std::nullopt;
    }
    std::string listed;
    for (std::size_t i = 0; i < differences.size() && i < k_max_listed_differences; ++i) {
        listed += (i == 0 ? "" : "; ") + differences[i];
    }
    if (differences.size() > k_max_listed_differences) {
        listed += "; and " + std::to_string(differences.size() - k_max_listed_differences) + " more";
    }
    return make_error("lock_outdated", "The image built from " + std::string(lock_display_path) +
                                           " does not match it (" + listed + "). " +
                                           refresh_hint(lock_display_path));
}

Expected<Lock> build_image_tar(const BuildRequest& request)
{
    std::error_code ignored;
    std::filesystem::remove(request.tar_file, ignored);
    ProcessOptions options;
    options.timeout = k_build_timeout;
    options.max_output = k_max_build_output;
    options.env = {{"SOURCE_DATE_EPOCH", std::to_string(request.recipe.source_date_epoch)},
                   {"TMPDIR", request.temp_dir.string()},
                   {"LC_ALL", "C.UTF-8"}};
    auto result = run_process(mmdebstrap_argv(request), options);
    if (!result) {
        return result.error();
    }
    if (result->timed_out || result->signal != 0 || result->exit_code != 0) {
        std::filesystem::remove(request.tar_file, ignored);
        if (request.pins) {
            if (const auto missing = find_missing_pin(result->output)) {
                return make_error("lock_outdated", "The Debian archive no longer has " + missing->package + "=" +
                                                       missing->version + " pinned in " +
                                                       request.lock_display_path + ". " +
                                                       refresh_hint(request.lock_display_path));
            }
        }
        const std::string how = result->timed_out ? "did not finish in time"
                                : result->signal != 0 ? "was killed by signal " + std::to_string(result->signal)
                                                      : "exited with " + std::to_string(result->exit_code);
        return make_error("image_build_failed", "mmdebstrap " + how + " while building the " +
                                                    request.image_name + " image. Its last output: " +
                                                    output_tail(result->output));
    }
    auto installed = parse_build_report(result->output);
    if (!installed) {
        std::filesystem::remove(request.tar_file, ignored);
        return installed.error();
    }
    if (request.pins) {
        if (auto mismatch = compare_with_lock(*request.pins, *installed, request.lock_display_path)) {
            std::filesystem::remove(request.tar_file, ignored);
            return *mismatch;
        }
    }
    return installed;
}

}  // namespace pybox::images
