#include "daemon/images/mmdebstrap_build.hpp"

#include "common/api_error_codes.hpp"
#include "common/process.hpp"
#include "common/trusted_binary.hpp"

#include <map>
#include <system_error>
#include <utility>

namespace pybox::images {

namespace {

constexpr std::string_view k_installed_prefix = "pybox-installed ";
constexpr std::string_view k_deb_prefix = "pybox-deb ";
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
    for (const auto& [name, pin] : pins) {
        hook += " 'Package: " + name + "' 'Pin: version " + pin.version + "' 'Pin-Priority: 1001' ''";
    }
    hook += " > \"$1" + std::string(k_pins_file) + "\"";
    return hook;
}

// Drops what differs between a pinned and an unpinned build of the same versions (the pins
// and apt's auto-installed marks; the image has no apt) and the host's /etc/resolv.conf and
// /etc/hostname that mmdebstrap copies in (nothing of the build host goes into the image),
// reports what the image holds with the SHA-256 of each .deb it came from (still in the apt
// cache: --skip=essential/unlink keeps the essential ones, mmdebstrap's cleanup removes all
// of them after this hook), and proves that python3 starts in it.
std::string report_hook()
{
    const std::string debs = "for deb in \"$1\"/var/cache/apt/archives/*.deb; do printf '" +
                             std::string(k_deb_prefix) +
                             "%s=%s %s\\n' \"$(dpkg-deb -f \"$deb\" Package)\" \"$(dpkg-deb -f \"$deb\" Version)\" "
                             "\"$(sha256sum < \"$deb\" | cut -d ' ' -f 1)\"; done";
    const std::string drop = "rm -f \"$1" + std::string(k_pins_file) + "\" \"$1/var/lib/apt/extended_states\" "
                             "\"$1/etc/resolv.conf\" && echo pybox > \"$1/etc/hostname\"";
    const std::string report = "chroot \"$1\" dpkg-query -W -f='" + std::string(k_installed_prefix) +
                               "${db:Status-Abbrev}${Package}=${Version}\\n'";
    const std::string python = "chroot \"$1\" /usr/bin/timeout -s KILL 20 /usr/bin/python3 -I -B -u -c 'print(\"" +
                               std::string(k_python_ok) + "\")'";
    return drop + " && " + debs + " && " + report + " && " + python;
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
        for (const auto& [name, pin] : *request.pins) {
            include += "," + name + "=" + pin.version;
        }
    }
    // apt downloads as root always: whether it could drop to _apt depends on TMPDIR's
    // permissions and would change the owner of folders in the image.
    std::vector<std::string> argv{k_mmdebstrap, "--variant=" + recipe.variant, "--format=tar",
                                  "--aptopt=APT::Sandbox::User \"root\"", "--skip=essential/unlink",
                                  "--include=" + include};
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

namespace {

// `name=version` with both parts valid, else nullopt.
std::optional<std::pair<std::string, std::string>> split_package(std::string_view text)
{
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos) {
        return std::nullopt;
    }
    const std::string_view name = text.substr(0, eq);
    const std::string_view version = text.substr(eq + 1);
    if (!is_valid_package_name(name) || !is_valid_package_version(version)) {
        return std::nullopt;
    }
    return std::pair{std::string(name), std::string(version)};
}

Error unreadable_line(std::string_view line)
{
    constexpr std::size_t k_max_quoted = 200;
    return make_error(api_error::k_image_build_failed, "The build reported an unreadable package line: " +
                                                std::string(line.substr(0, k_max_quoted)) + ".");
}

}  // namespace

Expected<Lock> parse_build_report(std::string_view output)
{
    std::map<std::string, std::string> installed;
    std::map<std::string, std::string> deb_sha256;  // "name=version" -> SHA-256 of its .deb
    bool python_ok = false;
    std::size_t at = 0;
    while (at < output.size()) {
        const std::size_t end = std::min(output.find('\n', at), output.size());
        const std::string_view line = output.substr(at, end - at);
        at = end + 1;
        if (line == k_python_ok) {
            python_ok = true;
        } else if (line.starts_with(k_deb_prefix)) {
            const std::string_view entry = line.substr(k_deb_prefix.size());
            const std::size_t space = entry.find(' ');
            const auto package = split_package(entry.substr(0, space));
            const std::string_view sha256 =
                space == std::string_view::npos ? std::string_view{} : entry.substr(space + 1);
            if (!package || !is_valid_sha256_hex(sha256)) {
                return unreadable_line(line);
            }
            const std::string key = package->first + "=" + package->second;
            const auto [found, added] = deb_sha256.emplace(key, sha256);
            if (!added && found->second != sha256) {
                return make_error(api_error::k_image_build_failed, "The build downloaded two different files for " + key + ".");
            }
        } else if (line.starts_with(k_installed_prefix)) {
            const std::string_view entry = line.substr(k_installed_prefix.size());
            const std::string_view status = entry.substr(0, 3);
            const auto package = split_package(entry.substr(std::min<std::size_t>(3, entry.size())));
            if (!package) {
                return unreadable_line(line);
            }
            if (status != "ii ") {
                return make_error(api_error::k_image_build_failed, "The package " + package->first +
                                                            " is not fully installed in the image (dpkg status \"" +
                                                            std::string(status) + "\").");
            }
            if (!installed.emplace(package->first, package->second).second) {
                return make_error(api_error::k_image_build_failed,
                                  "The build reported the package " + package->first + " twice.");
            }
        }
    }
    if (installed.empty()) {
        return make_error(api_error::k_image_build_failed, "The build did not report the installed packages.");
    }
    if (!python_ok) {
        return make_error(api_error::k_image_build_failed, "python3 did not start inside the built image.");
    }
    Lock lock;
    for (const auto& [name, version] : installed) {
        const auto sha256 = deb_sha256.find(name + "=" + version);
        if (sha256 == deb_sha256.end()) {
            return make_error(api_error::k_image_build_failed, "The build reported no downloaded .deb for the installed package " +
                                                        name + "=" + version + ", so its SHA-256 is unknown.");
        }
        lock.emplace(name, LockedPackage{version, sha256->second});
    }
    return lock;
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
    std::vector<std::string> wrong_hashes;
    for (const auto& [name, pin] : pins) {
        const auto found = built.find(name);
        if (found == built.end()) {
            differences.push_back(name + "=" + pin.version + " is missing");
        } else if (found->second.version != pin.version) {
            differences.push_back(name + " is " + found->second.version + ", not " + pin.version);
        } else if (found->second.sha256 != pin.sha256) {
            wrong_hashes.push_back(name + "=" + pin.version + " has SHA-256 " + found->second.sha256 + ", the lock says " +
                                   pin.sha256);
        }
    }
    for (const auto& [name, pin] : built) {
        if (!pins.contains(name)) {
            differences.push_back(name + "=" + pin.version + " is not in the lock");
        }
    }
    const auto listed = [](const std::vector<std::string>& items) {
        std::string text;
        for (std::size_t i = 0; i < items.size() && i < k_max_listed_differences; ++i) {
            text += (i == 0 ? "" : "; ") + items[i];
        }
        if (items.size() > k_max_listed_differences) {
            text += "; and " + std::to_string(items.size() - k_max_listed_differences) + " more";
        }
        return text;
    };
    if (!wrong_hashes.empty()) {
        return make_error(api_error::k_package_hash_mismatch,
                          "The build stopped: a downloaded package does not match the SHA-256 pinned in " +
                              std::string(lock_display_path) + " (" + listed(wrong_hashes) +
                              "). Nothing was imported. The archive or a proxy served other bytes for the same "
                              "version; find out why before refreshing the lock.");
    }
    if (differences.empty()) {
        return std::nullopt;
    }
    return make_error(api_error::k_lock_outdated, "The image built from " + std::string(lock_display_path) +
                                           " does not match it (" + listed(differences) + "). " +
                                           refresh_hint(lock_display_path));
}

Expected<Lock> build_image_tar(const BuildRequest& request, const std::function<void(std::string_view)>& on_output)
{
    if (auto trusted = check_trusted_binary(k_mmdebstrap, root_only_rule(), real_file_facts()); !trusted)
        return trusted.error();
    std::error_code ignored;
    std::filesystem::remove(request.tar_file, ignored);
    ProcessOptions options;
    options.timeout = k_build_timeout;
    options.max_output = k_max_build_output;
    options.env = {{"SOURCE_DATE_EPOCH", std::to_string(request.recipe.source_date_epoch)},
                   {"TMPDIR", request.temp_dir.string()},
                   {"LC_ALL", "C.UTF-8"}};
    options.on_output = on_output;
    auto result = run_process(mmdebstrap_argv(request), options);
    if (!result) {
        return result.error();
    }
    if (result->timed_out || result->signal != 0 || result->exit_code != 0) {
        std::filesystem::remove(request.tar_file, ignored);
        if (request.pins) {
            if (const auto missing = find_missing_pin(result->output)) {
                return make_error(api_error::k_lock_outdated, "The Debian archive no longer has " + missing->package + "=" +
                                                       missing->version + " pinned in " +
                                                       request.lock_display_path + ". " +
                                                       refresh_hint(request.lock_display_path));
            }
        }
        const std::string how = result->timed_out ? "did not finish in time"
                                : result->signal != 0 ? "was killed by signal " + std::to_string(result->signal)
                                                      : "exited with " + std::to_string(result->exit_code);
        return make_error(api_error::k_image_build_failed, "mmdebstrap " + how + " while building the " +
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
