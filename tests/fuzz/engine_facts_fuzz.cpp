// Fuzzes the reading of the engine's answers into typed facts (daemon/engine/docker_facts.hpp)
// and the settings check of an inspect answer (docker_settings.hpp): any JSON text, as the
// engine might send, must never crash either, and what they make must keep their promises.
#include "daemon/engine/docker_facts.hpp"
#include "daemon/engine/docker_settings.hpp"
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

engine::BoxSpec spec()
{
    engine::BoxSpec spec;
    spec.name = "pybox-run";
    spec.image_id = "sha256:abc";
    spec.command = {"python3", "-"};
    spec.policy = *pybox::proto::policy_for_image("stdlib");
    spec.labels = {{"pybox.owner", "owner"}, {"pybox.run", "run"}};
    return spec;
}

void check_inspection(const json::value& answer)
{
    const auto inspection = engine::docker_inspection(answer);
    const auto& state = inspection.state;
    if (!state.reported) check(state.status.empty() && !state.exit_code && !state.first_pid);
    if (state.first_pid) check(*state.first_pid > 0);
    if (state.reported) check(state.summary.size() == 3 && state.exit_code_record.size() == 1);
    static const engine::BoxSpec box = spec();
    const auto settings = engine::check_docker_settings(box, "runc", answer);
    check(settings.record.at("mismatches").as_array().size() == settings.mismatches.size());
    for (const auto& mismatch : settings.mismatches) {
        const std::string_view field = mismatch.field;
        check(field.starts_with("HostConfig.") || field.starts_with("Config."));
        check(!mismatch.expected.empty() && !mismatch.observed.empty());
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    json::error_code ec;
    const json::value answer = json::parse(std::string_view(reinterpret_cast<const char*>(data), size), ec);
    if (ec) return 0;
    check_inspection(answer);
    const auto info = engine::docker_engine_info(answer);
    if (!answer.is_object()) check(info.os_type.empty() && info.runtimes.empty() && !info.system_time);
    if (const auto* listed = answer.if_array())
        for (const auto& box : engine::docker_listed_boxes(*listed)) check(!box.id.empty());
    const auto image = engine::docker_image_facts(answer);
    if (!answer.is_object()) check(image.id.empty());
    return 0;
}
