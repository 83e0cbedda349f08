// Fuzzes the kubeconfig reader (daemon/kube/kubeconfig.hpp) with the input as the kubeconfig's
// text, in a folder that does not exist (every file it names is missing): it must never crash,
// and whatever it accepts must be usable: an https server with a host, a CA, and exactly one
// kind of credentials.
#include "daemon/kube/kubeconfig.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using pybox::fuzz::check;

void check_usable(const pybox::Expected<pybox::kube::KubeAccess>& access)
{
    if (!access) {
        check(access.error().code == "kubeconfig_invalid");
        check(!access.error().message.empty());
        return;
    }
    check(access->server.url.rfind("https://", 0) == 0);
    check(!access->server.host.empty() && access->server.port != 0);
    check(!access->ca_pem.empty());
    const bool certificate = !access->client_cert_pem.empty() && !access->client_key_pem.empty();
    check(certificate != !access->token.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::filesystem::path file = "/nonexistent/pybox-fuzz/kubeconfig";
    check_usable(pybox::kube::parse_kubeconfig(text, file, std::nullopt));
    check_usable(pybox::kube::parse_kubeconfig(text, file, std::string("ctx")));
    const auto server = pybox::kube::parse_api_server(text, "server");
    if (server) check(!server->host.empty() && server->port != 0 && server->url == text);
    return 0;
}
