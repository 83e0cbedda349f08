// The typed facts an engine reports: a box's state and inspection, a listed box, the engine's
// info, its cgroup layout and an image's ID. Each keeps the engine's own answer (`raw`) where the receipt records
// it as evidence; nothing else above daemon/engine/ reads an engine's notation. EngineClient
// reads them out of the Docker Engine API's answers (docker_facts.hpp).
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pybox::engine {

// A box's process as the engine reports it.
struct BoxState {
    bool reported = false;  // false: the answer had no state to read (every field below is empty)
    std::string status;     // "created", "running", "exited", ...; empty when not reported
    bool running = false;
    std::optional<std::int64_t> exit_code;       // as reported, even while running
    bool oom_killed = false;                     // some process in the box was OOM-killed
    std::optional<std::int64_t> first_pid;       // the box's first process on the host, when > 0
    std::optional<std::int64_t> started_at_ns;   // engine wall clock, unix ns
    std::optional<std::int64_t> finished_at_ns;  // engine wall clock, unix ns
    boost::json::value raw;  // the engine's own record of the state: the receipt's observed.engine_state
    // Status, exit code (null while running) and OOM kill in the engine's own words: the evidence
    // of the explanations drawn from the state.
    boost::json::object summary;
    // The exit code alone in the engine's words, for evidence that cites only it.
    boost::json::object exit_code_record;
    // Whether the box's first process recorded PyBox's kill before the box ended: a record only
    // the kill's sender can make (on Kubernetes, the kill's one-time nonce in the container's
    // termination message; kube_box_engine.hpp). nullopt where the engine cannot observe it
    // (Docker) or the box has not ended; false where no kill was sent.
    std::optional<bool> kill_acknowledged;
    // What kill_acknowledged was read from, in the engine's words with the nonce it was compared
    // with: the evidence of an explanation drawn from it. Empty when kill_acknowledged is nullopt.
    boost::json::object kill_acknowledgement_record;
};

// One answer of "inspect this box".
struct BoxInspection {
    BoxState state;
    boost::json::value raw;  // the whole answer, which check_settings reads
};

// A box the engine lists.
struct ListedBox {
    std::string id;
    std::vector<std::pair<std::string, std::string>> labels;
    // The value of `key`, empty when the box has no such label.
    std::string label(std::string_view key) const;
};

// What the engine says of itself.
struct EngineInfo {
    std::string os_type;         // the kind of containers it runs: "linux"
    std::string data_root;       // where it keeps its data
    std::string cgroup_driver;   // "cgroupfs", "systemd"; empty when not reported
    std::string cgroup_version;  // "1", "2"; empty when not reported
    bool seccomp = false;        // it offers seccomp
    std::vector<std::string> runtimes;
    std::optional<std::string> system_time;  // its wall clock at the answer, RFC 3339 text
    boost::json::value raw;
};

// How an engine's cgroup tree is laid out, for the watcher of its boxes (daemon/run/run_cgroup.hpp).
struct CgroupFacts {
    int version = 0;     // 1 or 2
    std::string driver;  // "cgroupfs" or "systemd"
};

struct ImageFacts {
    std::string id;  // "sha256:..."; empty when the answer named none
    boost::json::value raw;
};

}  // namespace pybox::engine
