// Test data shared by the receipt's tests and the client's: a complete receipt of a run that
// ended by itself, and the same receipt as a newer daemon (still API v1) might write it.
#pragma once

#include "proto/box_policy.hpp"
#include "proto/receipt.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>

namespace pybox::test {

using proto::CleanupStatus;
using proto::Receipt;
using proto::TerminationMechanism;

inline Receipt sample_receipt()
{
    Receipt receipt;
    receipt.identity = {"5319e024aa0c4b6e9d1f00112233aabb", "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "stdlib",
                        "sha256:" + std::string(64, 'a'), std::string(64, 'b'), "2026-11-29T20:00:05.021506Z",
                        1'795'000'000, "0.1.0+c0b8f2b"};
    receipt.engine = proto::EngineRef{"local", "unix:///r/engine/docker.sock"};
    receipt.container_id = std::string(64, 'c');
    receipt.source_sha256 = std::string(64, 'd');
    receipt.source_bytes = 11;
    receipt.configured.wall_timeout_s = 2.0;
    receipt.configured.guest_timer_s = 3.0;
    receipt.configured.output_limit_bytes = 65'536;
    receipt.configured.policy = *proto::policy_for_image("stdlib");
    receipt.configured.command = proto::box_command(2.0);
    receipt.observed.policy_verified_before_start = true;
    receipt.observed.effective_policy =
        boost::json::object{{"Memory", 134217728}, {"mismatches", boost::json::array{}}};
    receipt.observed.engine_state =
        boost::json::object{{"Status", "exited"}, {"ExitCode", 0}, {"OOMKilled", false},
                            {"StartedAt", "2026-11-29T20:00:05.1Z"}, {"FinishedAt", "2026-11-29T20:00:05.17Z"}};
    receipt.observed.resources = boost::json::object{{"status", "UNKNOWN"}, {"reason", "no watcher yet"}};
    receipt.observed.termination = {TerminationMechanism::target_exit_observed, 0, std::nullopt, false, 0.074583};
    receipt.capture.stdout_stream = {"42\n", 3};
    receipt.capture.stderr_stream = {"", 0};
    receipt.capture.output_complete = true;
    receipt.capture.provenance = "target byte streams via bounded Docker attach; untrusted content";
    receipt.lifecycle.last_phase = "remove";
    receipt.lifecycle.phases = {{"create", 0.001, 0.07, "ok"}, {"run", 0.2, 0.166, "ok"}};
    receipt.lifecycle.queued_s = 0.04;
    receipt.lifecycle.total_s = 0.31;
    receipt.cleanup = {CleanupStatus::removed, true, 1, std::nullopt, boost::json::object{{"removed", 0}}};
    receipt.unknown = {{"resources", "the kernel watcher is not built yet"},
                       {"absolute_clock_alignment", "engine and host clocks are not aligned"}};
    receipt.explanations = {{"TARGET_EXIT", "The program exited with code 0.", boost::json::object{{"ExitCode", 0}}}};
    return receipt;
}

// Adds a key this build does not know to every object of `document`, at every level: in
// `unknown` a true flag, with its reason in `unknown_reasons`; in `not_applicable`, whose values
// are reasons, a string; elsewhere an object holding an array.
inline void add_keys_everywhere(boost::json::value& document, std::string_view parent = {})
{
    if (auto* object = document.if_object()) {
        for (auto& [key, value] : *object) add_keys_everywhere(value, key);
        if (parent == "unknown")
            (*object)["added_later"] = true;
        else if (parent == "unknown_reasons" || parent == "not_applicable")
            (*object)["added_later"] = "a reason added by a newer daemon";
        else
            (*object)["added_later"] = boost::json::object{{"nested", boost::json::array{1, "two", nullptr}}};
    } else if (auto* array = document.if_array()) {
        for (auto& item : *array) add_keys_everywhere(item);
    }
}

}  // namespace pybox::test
