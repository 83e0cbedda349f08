// DockerBoxEngine: the BoxEngine of the Docker Engine API, over an EngineClient it is given
// (which must outlive it). A box spec becomes a create body and an inspect answer becomes
// typed facts through docker_settings.hpp and docker_facts.hpp; the attach connection's
// multiplexed frames become output chunks (stream_demuxer.hpp) and the wait's answer the box's
// end; a kill answered 409 (not running) is a box that had already ended; the calls, their timeouts and
// their Error codes are the EngineClient's. Same executor and thread rules as the EngineClient.
#pragma once

#include "daemon/engine/box_engine.hpp"
#include "daemon/engine/engine_client.hpp"

#include <string>
#include <utility>

namespace pybox::engine {

class DockerBoxEngine final : public BoxEngine {
public:
    // `runtime`: the OCI runtime its boxes run under (config.json's "runtime"), which the engine
    // must list.
    DockerBoxEngine(EngineClient& client, std::string runtime) : m_client(client), m_runtime(std::move(runtime)) {}

    std::string describe() const override { return m_client.dialer().describe(); }
    EngineClient& client() { return m_client; }

    std::string output_provenance() const override;
    // The cgroupfs driver names a box's cgroup by its container id below its CgroupParent.
    std::optional<std::string> box_cgroup(std::string_view run_parent, std::string_view box_id) const override;
    net::awaitable<Expected<CreatedBox>> create_box(const BoxSpec& spec, Timeout timeout) override;
    net::awaitable<Expected<BoxInspection>> inspect_box(std::string_view id, Timeout timeout) override;
    SettingsCheck check_settings(const BoxSpec& spec, const BoxInspection& inspection) const override;
    // Attaches, registers the wait for the next exit, then starts: Docker's order, in which
    // neither the first output nor the exit can pass unseen.
    net::awaitable<boost::system::result<LaunchedBox, LaunchFailure>> launch_box(std::string_view id,
                                                                                LaunchTimeouts timeouts) override;
    net::awaitable<Expected<BoxKillOutcome>> kill_box(std::string_view id, Timeout timeout) override;
    net::awaitable<Expected<void>> remove_box(std::string_view id, Timeout timeout) override;
    net::awaitable<Expected<std::vector<ListedBox>>> list_boxes(const std::vector<std::string>& labels,
                                                               Timeout timeout) override;

private:
    EngineClient& m_client;
    std::string m_runtime;
};

// A Docker attach connection as a box's streams: its frames parsed into chunks as they arrive.
std::unique_ptr<BoxStreams> docker_box_streams(std::unique_ptr<AttachSession> session);

}  // namespace pybox::engine
