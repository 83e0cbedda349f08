// Fuzzes the readers of the apiserver's and the kubelet's answers (daemon/kube/): the kubelet's
// configz (strict: only a positive podPidsLimit comes out), a Status body and the Error made
// from it, and the namespace check. Never a crash; errors carry their codes.
#include "daemon/kube/cluster_checks.hpp"
#include "daemon/kube/kube_status.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

using pybox::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace pybox::kube;
    const std::string_view body(reinterpret_cast<const char*>(data), size);

    const auto limit = parse_pod_pids_limit(body);
    if (limit) {
        check(!limit->has_value() || **limit > 0);
    } else {
        check(limit.error().code == "engine_protocol");
    }

    (void)parse_kube_status(body);
    for (const unsigned status : {401U, 403U, 404U, 409U, 422U, 500U}) {
        const auto error = status_error("GET /x", status, body);
        check(error.code == (status == 404 ? "engine_no_such_object" : "engine_error"));
        check(error.message.size() < 4096);
    }
    const auto problem = namespace_problem("ns", 200, body);
    if (problem) check(problem->check == "namespace");
    return 0;
}
