#include "daemon/macos/colima_checks.hpp"

#include "common/api_error_codes.hpp"
#include "proto/request_json.hpp"
#include "util/text.hpp"

#include <boost/json.hpp>

#include <array>
#include <charconv>

namespace pybox::macos {

namespace json = boost::json;

namespace {

Error invalid(const std::string& what, const std::string& why)
{
    return make_error(api_error::k_colima_output_invalid, what + " is not what PyBox expects: " + why + ".");
}

std::vector<std::string_view> split(std::string_view text, char separator)
{
    std::vector<std::string_view> parts;
    while (true) {
        const auto at = text.find(separator);
        parts.push_back(text.substr(0, at));
        if (at == std::string_view::npos) break;
        text.remove_prefix(at + 1);
    }
    return parts;
}

// The lines of `text`; a final newline ends the last line instead of starting an empty one.
std::vector<std::string_view> lines_of(std::string_view text)
{
    if (text.ends_with('\n')) text.remove_suffix(1);
    if (text.empty()) return {};
    return split(text, '\n');
}

}  // namespace

Expected<ColimaStatus> parse_colima_status(std::string_view text)
{
    const std::string what = "colima status --json";
    if (text.size() > k_max_status_bytes) return invalid(what, "it is over " + std::to_string(k_max_status_bytes) + " bytes");
    auto parsed = proto::parse_request_json(text);
    if (!parsed) return invalid(what, parsed.error().message);
    const auto* object = parsed->if_object();
    if (object == nullptr) return invalid(what, "it is not one JSON object");

    ColimaStatus status;
    const std::array<std::pair<std::string_view, std::string*>, 10> strings = {{
        {"display_name", &status.display_name}, {"driver", &status.driver}, {"arch", &status.arch},
        {"runtime", &status.runtime}, {"mount_type", &status.mount_type}, {"ip_address", &status.ip_address},
        {"docker_socket", &status.docker_socket}, {"containerd_socket", &status.containerd_socket},
        {"buildkitd_socket", &status.buildkitd_socket}, {"incus_socket", &status.incus_socket},
    }};
    const std::array<std::pair<std::string_view, std::int64_t*>, 3> numbers = {{
        {"cpu", &status.cpu}, {"memory", &status.memory}, {"disk", &status.disk},
    }};
    for (const auto& [key, value] : *object) {
        const std::string name(key);
        const std::string quoted = "key \"" + util::printable_excerpt(name, 32) + "\"";
        bool known = false;
        for (const auto& [string_key, target] : strings) {
            if (key != string_key) continue;
            known = true;
            if (!value.is_string() || value.get_string().size() > 1024)
                return invalid(what, quoted + " is not a string of at most 1024 bytes");
            *target = std::string(value.get_string());
        }
        for (const auto& [number_key, target] : numbers) {
            if (key != number_key) continue;
            known = true;
            if (!value.is_int64() || value.get_int64() < 0) return invalid(what, quoted + " is not a whole number >= 0");
            *target = value.get_int64();
        }
        if (key == "kubernetes") {
            known = true;
            if (!value.is_bool()) return invalid(what, quoted + " is not true or false");
            status.kubernetes = value.get_bool();
        }
        if (!known) return invalid(what, "it has the " + quoted + ", which colima " + std::string(k_min_colima_version) +
                                             " does not report");
    }
    for (const auto required : {"display_name", "arch", "runtime"})
        if (!object->contains(required)) return invalid(what, std::string("it lacks the key \"") + required + "\"");
    return status;
}

Expected<std::vector<GuestMount>> parse_guest_mounts(std::string_view text)
{
    const std::string what = "The VM's /proc/self/mounts";
    if (text.size() > k_max_mounts_bytes) return invalid(what, "it is over " + std::to_string(k_max_mounts_bytes) + " bytes");
    const auto lines = lines_of(text);
    if (lines.empty()) return invalid(what, "it is empty");
    if (lines.size() > k_max_mount_lines) return invalid(what, "it has over " + std::to_string(k_max_mount_lines) + " lines");
    std::vector<GuestMount> mounts;
    for (std::size_t index = 0; index < lines.size(); ++index) {
        const auto fields = split(lines[index], ' ');
        const auto line = "line " + std::to_string(index + 1);
        if (fields.size() != 6) return invalid(what, line + " does not have 6 fields");
        for (const auto field : fields) {
            if (field.empty()) return invalid(what, line + " has an empty field");
            for (const char c : field)
                if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e)
                    return invalid(what, line + " has a byte that is not printable ASCII");
        }
        if (fields[4] != "0" || fields[5] != "0") return invalid(what, line + " does not end with 0 0");
        mounts.push_back({std::string(fields[0]), std::string(fields[1]), std::string(fields[2])});
    }
    return mounts;
}

namespace {

// A Go %#q value: `text` or "text" (escapes kept as they are).
std::optional<std::string_view> unquote(std::string_view text)
{
    if (text.size() < 2) return std::nullopt;
    const char quote = text.front();
    if ((quote != '`' && quote != '"') || text.back() != quote) return std::nullopt;
    text = text.substr(1, text.size() - 2);
    if (text.empty() || text.find(quote) != std::string_view::npos) return std::nullopt;
    return text;
}

// Reads one "Forwarding ..." message; nullopt when it has none of Lima's shapes.
bool read_forwarding(std::string_view message, HostagentForwards& forwards)
{
    for (const std::string_view proto : {"TCP", "UDP"}) {
        const std::string prefix = "Forwarding " + std::string(proto) + " from ";
        if (!message.starts_with(prefix)) continue;
        const auto rest = message.substr(prefix.size());
        const auto to = rest.find(" to ");
        if (to == std::string_view::npos || to == 0 || to + 4 >= rest.size()) return false;
        const auto guest = rest.substr(0, to);
        const auto host = rest.substr(to + 4);
        if (guest.find(' ') != std::string_view::npos || host.find(' ') != std::string_view::npos) return false;
        forwards.ports.push_back({std::string(proto), std::string(guest), std::string(host)});
        return true;
    }
    constexpr std::string_view prefix = "Forwarding ";
    const auto rest = message.substr(prefix.size());
    for (const bool to_host : {true, false}) {
        const std::string_view middle = to_host ? " (guest) to " : " (host) to ";
        const std::string_view suffix = to_host ? " (host)" : " (guest)";
        const auto at = rest.find(middle);
        if (at == std::string_view::npos || !rest.ends_with(suffix)) continue;
        const auto first = unquote(rest.substr(0, at));
        const auto second = unquote(rest.substr(at + middle.size(), rest.size() - at - middle.size() - suffix.size()));
        if (!first || !second) return false;
        forwards.sockets.push_back(to_host ? SocketForward{true, std::string(*first), std::string(*second)}
                                           : SocketForward{false, std::string(*second), std::string(*first)});
        return true;
    }
    return false;
}

}  // namespace

Expected<HostagentForwards> parse_hostagent_log(std::string_view text)
{
    const std::string what = "Lima's host agent log";
    if (text.size() > k_max_hostagent_log_bytes)
        return invalid(what, "it is over " + std::to_string(k_max_hostagent_log_bytes) + " bytes");
    HostagentForwards forwards;
    std::size_t number = 0;
    for (const auto line : lines_of(text)) {
        ++number;
        // Lima's own lines are logrus JSON objects; anything else (a crash trace) says nothing
        // about forwarding.
        if (!line.starts_with('{')) continue;
        const auto where = "line " + std::to_string(number);
        auto parsed = proto::parse_request_json(line);
        if (!parsed || !parsed->is_object()) return invalid(what, where + " is not one JSON object");
        const auto* message = parsed->as_object().if_contains("msg");
        if (message == nullptr || !message->is_string()) return invalid(what, where + " has no \"msg\" string");
        const std::string_view text_of_message = message->get_string();
        if (!text_of_message.starts_with("Forwarding ")) continue;
        if (!read_forwarding(text_of_message, forwards))
            return invalid(what, where + " forwards something in a way PyBox does not know: " +
                                     util::printable_excerpt(text_of_message, 120));
    }
    return forwards;
}

bool is_shared_folder_type(std::string_view fstype)
{
    for (const std::string_view shared : {"virtiofs", "9p", "sshfs", "nfs", "nfs4", "cifs", "smb3", "smbfs"})
        if (fstype == shared) return true;
    return fstype == "fuse" || fstype.starts_with("fuse.");
}

std::string ColimaVerdict::reason() const
{
    std::string text;
    for (const auto& problem : problems) {
        if (!text.empty()) text += "; ";
        text += problem.check + ": " + problem.message;
    }
    return text;
}

ColimaVerdict check_colima(const ColimaFacts& facts, const ColimaLayout& layout)
{
    ColimaVerdict verdict;
    const auto problem = [&](std::string check, std::string message) {
        verdict.problems.push_back({std::move(check), std::move(message)});
    };
    const auto& status = facts.status;
    const std::string profile(k_colima_profile);
    const std::string expected_name = "colima [profile=" + profile + "]";
    if (status.display_name != expected_name)
        problem("status.display_name", "colima answered for \"" + util::printable_excerpt(status.display_name) +
                                           "\", not for " + expected_name + ".");
    if (status.runtime != k_vm_runtime)
        problem("status.runtime", "the VM runs \"" + util::printable_excerpt(status.runtime) + "\", not docker.");
    if (status.arch != k_vm_arch)
        problem("status.arch", "the VM is \"" + util::printable_excerpt(status.arch) + "\", not aarch64.");
    if (status.kubernetes) problem("status.kubernetes", "Kubernetes runs in the VM.");
    if (!status.ip_address.empty())
        problem("status.network", "the VM has the reachable address " + util::printable_excerpt(status.ip_address) + ".");
    const std::string socket = "unix://" + layout.docker_socket.string();
    if (status.docker_socket != socket)
        problem("status.docker_socket", "the Docker socket is \"" + util::printable_excerpt(status.docker_socket, 200) +
                                            "\", not " + socket + ".");
    constexpr std::int64_t gib = 1024LL * 1024 * 1024;
    // A size colima could not read is reported as 0; one it reports must be the profile's.
    if ((status.cpu != 0 && status.cpu != k_vm_cpus) || (status.memory != 0 && status.memory != k_vm_memory_gib * gib) ||
        (status.disk != 0 && status.disk != k_vm_disk_gib * gib))
        problem("status.size", "the VM has " + std::to_string(status.cpu) + " CPUs, " + std::to_string(status.memory) +
                                   " bytes of memory and " + std::to_string(status.disk) + " bytes of disk, not " +
                                   std::to_string(k_vm_cpus) + ", " + std::to_string(k_vm_memory_gib) + " GiB and " +
                                   std::to_string(k_vm_disk_gib) + " GiB.");
    for (const auto& mount : facts.mounts)
        if (is_shared_folder_type(mount.fstype))
            problem("mounts", "a shared folder (" + util::printable_excerpt(mount.fstype) + " " +
                                  util::printable_excerpt(mount.source) + ") is mounted at " +
                                  util::printable_excerpt(mount.target, 200) + " in the VM.");
    for (const auto& port : facts.forwards.ports)
        problem("ports", "Lima forwarded " + port.proto + " " + util::printable_excerpt(port.guest) + " of the VM to " +
                             util::printable_excerpt(port.host) + " on this Mac.");
    for (const auto& forward : facts.forwards.sockets) {
        const bool docker = forward.to_host && forward.guest == k_guest_docker_socket &&
                            forward.host == layout.docker_socket.string();
        const bool containerd = forward.to_host && forward.guest == k_guest_containerd_socket &&
                                forward.host == layout.containerd_socket.string();
        if (!docker && !containerd)
            problem("sockets", std::string(forward.to_host ? "the VM's socket " : "this Mac's socket ") +
                                   util::printable_excerpt(forward.to_host ? forward.guest : forward.host, 200) +
                                   " is forwarded to " +
                                   util::printable_excerpt(forward.to_host ? forward.host : forward.guest, 200) + ".");
    }
    if (facts.override_on_disk != override_yaml())
        problem("override", layout.override_file.string() + " is not the file PyBox wrote.");
    return verdict;
}

}  // namespace pybox::macos
