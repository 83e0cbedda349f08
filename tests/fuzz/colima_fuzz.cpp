// Fuzzes what PyBox reads from colima, Lima and the colima VM on macOS (daemon/macos): the first
// byte picks the parser (status JSON, the VM's mounts, Lima's host agent log, the ssh config,
// the VM's host key line) and the rest is its input. Nothing may crash; what a parser accepts
// must keep its promises, and the verdict over accepted facts must be well-formed.
#include "daemon/macos/colima_checks.hpp"
#include "daemon/macos/colima_ssh_config.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {

using pybox::fuzz::check;

using namespace pybox::macos;

const ColimaLayout& layout()
{
    static const ColimaLayout value(pybox::RuntimePaths("/Users/ada/.pybox/runtime"));
    return value;
}

void check_verdict(const ColimaFacts& facts)
{
    const auto verdict = check_colima(facts, layout());
    check(verdict.ok() == verdict.reason().empty());
    for (const auto& problem : verdict.problems) check(!problem.check.empty() && !problem.message.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1) return 0;
    const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
    ColimaFacts facts;
    facts.override_on_disk = override_yaml();
    switch (data[0] % 5) {
    case 0:
        if (const auto status = parse_colima_status(input)) {
            check(input.size() <= k_max_status_bytes);
            check(status->cpu >= 0 && status->memory >= 0 && status->disk >= 0);
            facts.status = *status;
            check_verdict(facts);
        }
        break;
    case 1:
        if (const auto mounts = parse_guest_mounts(input)) {
            check(!mounts->empty() && mounts->size() <= k_max_mount_lines);
            for (const auto& mount : *mounts)
                check(!mount.source.empty() && !mount.target.empty() && !mount.fstype.empty() &&
                      mount.target.find(' ') == std::string::npos);
            facts.mounts = *mounts;
            check_verdict(facts);
        }
        break;
    case 2:
        if (const auto forwards = parse_hostagent_log(input)) {
            for (const auto& port : forwards->ports) check(port.proto == "TCP" || port.proto == "UDP");
            for (const auto& socket : forwards->sockets) check(!socket.guest.empty() && !socket.host.empty());
            facts.forwards = *forwards;
            check_verdict(facts);
        }
        break;
    case 3:
        if (const auto config = parse_colima_ssh_config(input, layout())) {
            check(config->address.host == "127.0.0.1" && config->address.port != 0);
            check(config->identity_file == layout().lima_key);
            check(!config->known_hosts || config->known_hosts->is_absolute());
            const auto target = colima_ssh_engine(*config, std::string("SHA256:VZ25S2eYzkLAezlMX5f77FRikwEEkGc2jTPQIxihLe8"));
            check(target.has_value());
        }
        break;
    default:
        if (const auto fingerprint = host_key_fingerprint(input)) {
            check(pybox::engine::is_sha256_fingerprint(*fingerprint));
            check(parse_host_key_pin(host_key_pin_text(*fingerprint)).value() == *fingerprint);
        }
        break;
    }
    return 0;
}
