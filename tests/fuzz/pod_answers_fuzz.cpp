// Fuzzes the readers of the apiserver's Pod answers (daemon/kube/pod_state.hpp), the check of
// a Pod it holds against the one PyBox asked for (pod_spec.hpp) and of the NetworkPolicy it holds
// (network_policy.hpp): any JSON text, as the apiserver
// might send, must never crash them, and what they make must keep their promises.
#include "daemon/kube/network_policy.hpp"
#include "daemon/kube/pod_spec.hpp"
#include "daemon/kube/pod_state.hpp"
#include "proto/box_policy.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {

using pybox::fuzz::check;

namespace engine = pybox::engine;
namespace json = boost::json;
namespace kube = pybox::kube;

json::object asked_pod()
{
    engine::BoxSpec spec;
    spec.name = "pybox-run";
    spec.command = {"python3", "-"};
    spec.environment = {"PATH=/usr/bin", "EMPTY="};
    spec.hostname = "pybox";
    spec.policy = *pybox::proto::policy_for_image("stdlib");
    spec.labels = {{"pybox.owner", "owner"}, {"pybox.run", "run"}};
    return kube::make_pod(spec, {"registry/pybox/stdlib@sha256:00", "pybox.json", 3, "node"});
}

// The nonce of the kill the fuzzed answers are read against.
constexpr std::string_view k_kill_nonce = "0123456789abcdef0123456789abcdef";

void check_state(const json::value& answer)
{
    const auto inspection = kube::inspect_pod(answer, k_kill_nonce);
    const auto& state = inspection.state;
    // Acknowledged exactly when the box ended with the kill's record as its message.
    check(state.kill_acknowledged.has_value() == (state.status == "exited"));
    check(state.kill_acknowledgement_record.empty() == !state.kill_acknowledged.has_value());
    if (state.kill_acknowledged == true)
        check(state.kill_acknowledgement_record.at("terminationMessage") ==
              json::value(pybox::proto::fed_kill_record(k_kill_nonce)));
    check(kube::box_container_state(answer).kill_acknowledged != true);
    if (!state.reported) check(state.status.empty() && !state.exit_code && !state.running);
    if (state.reported) {
        check(state.status == "pending" || state.status == "running" || state.status == "exited");
        check(state.running == (state.status == "running"));
        check(state.exit_code.has_value() == (state.status == "exited"));
        check(state.summary.size() == 3 && state.exit_code_record.size() == 1);
    }
    check(!state.first_pid);
    (void)kube::pod_facts(answer);
}

void check_list(const json::value& answer)
{
    const auto boxes = kube::listed_pods(answer);
    if (!boxes) {
        check(boxes.error().code == "engine_protocol");
        return;
    }
    for (const auto& box : *boxes) {
        const auto ref = kube::parse_pod_ref(box.id);
        check(ref && kube::pod_ref_id(*ref) == box.id);
    }
}

void check_settings(const json::value& answer)
{
    static const json::object asked = asked_pod();
    const auto settings = kube::check_pod(asked, answer);
    check(settings.record.at("mismatches").as_array().size() == settings.mismatches.size());
    for (const auto& mismatch : settings.mismatches)
        check(!mismatch.field.empty() && !mismatch.expected.empty() && !mismatch.observed.empty());
    if (answer == json::value(asked)) check(settings.mismatches.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    json::error_code ec;
    const json::value answer = json::parse(text, ec);
    if (ec) {
        check(!kube::parse_pod_ref(text) || kube::pod_ref_id(*kube::parse_pod_ref(text)) == text);
        return 0;
    }
    check_state(answer);
    check_list(answer);
    check_settings(answer);
    const auto problem = kube::deny_all_problem(answer, "owner");
    check(!problem || !problem->empty());
    if (answer == json::value(kube::deny_all_policy("owner"))) check(!problem);
    if (const auto* quantity = answer.if_string()) {
        const auto millis = kube::quantity_millis(*quantity);
        check(!millis || *millis >= 0);
    }
    return 0;
}
