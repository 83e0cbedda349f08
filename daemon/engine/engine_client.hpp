// EngineClient: a Docker Engine API client over a pluggable byte stream (HTTP/1.1, JSON).
//
// A plain request/response call reuses an idle connection kept from an earlier call when the
// dialer keeps connections (HTTP/1.1 keep-alive, kept_connections.hpp: at most one; the ssh
// dialer does, which saves an exec channel per call), else opens one through the EngineDialer;
// a stream (attach, wait, image upload and export)
// always opens its own. A kept connection the engine has closed is replaced unseen; one that
// fails under a call is replaced and the call sent again once, only when the engine cannot have
// acted on it (engine_http.hpp, may_send_again). Every call applies the timeout it is given to
// the whole exchange, bounds every response body (limits::k_max_engine_response_bytes) and maps
// failures to Error values:
//   "engine_unreachable"  connect failed (socket missing, refused)
//   "engine_timeout"      the exchange did not finish in time
//   "engine_protocol"     malformed HTTP or JSON from the engine, or a body over the cap
//   "engine_no_such_object" the engine answered 404
//   "engine_error"        any other non-2xx answer (message carries the engine's "message")
// All calls are coroutines on the executor given at construction; the object is not
// thread-safe and must outlive the calls made on it. The API version is negotiated by ping()
// (min of the engine's Api-Version and k_max_api_version); before that, calls use the
// unversioned path.
#pragma once

#include "common/error.hpp"
#include "daemon/engine/engine_call.hpp"
#include "daemon/engine/engine_facts.hpp"
#include "daemon/engine/kept_connections.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::engine {

namespace json = boost::json;
using Stream = net::local::stream_protocol::socket;

inline constexpr std::string_view k_max_api_version = "1.41";

// Opens a fresh connected byte stream to the engine. Implementations: a unix socket
// (make_unix_socket_dialer) and an ssh engine (ssh_dialer.hpp: one end of a socketpair its
// session pumps to `socat STDIO UNIX-CONNECT:<engine socket>` in an exec channel).
class EngineDialer {
public:
    virtual ~EngineDialer() = default;
    virtual net::awaitable<Expected<Stream>> dial(Timeout timeout) = 0;
    // Whether EngineClient keeps a connection open between plain calls (kept_connections.hpp):
    // worth it where a dial is costly (an ssh exec channel). A unix socket connect costs
    // microseconds, so there every call has a connection of its own, as an engine whose socket
    // goes away expects.
    virtual bool keeps_connections() const { return false; }
    // Human-readable address for messages, e.g. "unix:///home/u/.pybox/runtime/engine/docker.sock".
    virtual std::string describe() const = 0;
};

std::unique_ptr<EngineDialer> make_unix_socket_dialer(net::any_io_executor executor,
                                                      std::filesystem::path socket_path);

struct PingResult {
    std::string api_version;  // what the engine advertised
    std::string negotiated;   // what this client now uses
    std::string os_type;
};

struct EngineResponse {
    unsigned status = 0;
    json::value body;  // parsed JSON, or null for an empty body / non-JSON body
};

struct CreateResult {
    std::string id;
    std::vector<std::string> warnings;
};

enum class KillOutcome { killed, not_running };

struct WaitResult {
    std::int64_t status_code = -1;
    std::string error;  // the engine's Error.Message, empty if none
};

// A long-poll `POST /containers/{id}/wait?condition=next-exit` whose response headers have
// already arrived, so the engine has registered the wait. result() reads the body.
class WaitHandle {
public:
    virtual ~WaitHandle() = default;
    // Completes when the container exits (or the timeout passes: "engine_timeout").
    virtual net::awaitable<Expected<WaitResult>> result(Timeout timeout) = 0;
    // Abandons the wait (closes the connection); result() then fails promptly.
    virtual void cancel() = 0;
};

// A hijacked attach connection (stdin, stdout, stderr; Tty=false, so the output is the
// engine's multiplexed frame stream, handed out raw: DockerBoxEngine parses it into a box's
// output chunks, docker_box_streams()). Bytes
// that arrived together with the 101 response are returned by the first read_some().
class AttachSession {
public:
    virtual ~AttachSession() = default;
    // Writes all bytes to the container's stdin.
    virtual net::awaitable<Expected<void>> write_stdin(std::string_view bytes, Timeout timeout) = 0;
    // Half-closes the connection (shutdown SHUT_WR); with StdinOnce the engine closes stdin.
    virtual Expected<void> close_stdin() = 0;
    // Reads the next chunk of raw multiplexed bytes; returns an empty string at end of stream.
    // No timeout: the caller bounds it (cancel() or the run's deadline).
    virtual net::awaitable<Expected<std::string>> read_some() = 0;
    // Closes the connection; a pending read_some() completes with an error.
    virtual void cancel() = 0;
};

class EngineClient {
public:
    EngineClient(net::any_io_executor executor, std::unique_ptr<EngineDialer> dialer);
    ~EngineClient();
    EngineClient(const EngineClient&) = delete;
    EngineClient& operator=(const EngineClient&) = delete;

    const EngineDialer& dialer() const { return *m_dialer; }
    const std::string& api_version() const { return m_api_version; }

    net::awaitable<Expected<PingResult>> ping(Timeout timeout);
    net::awaitable<Expected<EngineInfo>> info(Timeout timeout);

    // Any JSON call: target is the path after the version prefix, e.g. "/containers/json?all=1".
    // A non-2xx status is returned as a value here (no Error), so callers can read it.
    net::awaitable<Expected<EngineResponse>> request(std::string_view method, std::string_view target,
                                                    const json::value* body, Timeout timeout);

    net::awaitable<Expected<CreateResult>> create_container(const json::object& spec,
                                                            std::string_view name, Timeout timeout);
    net::awaitable<Expected<BoxInspection>> inspect_container(std::string_view id, Timeout timeout);
    net::awaitable<Expected<void>> start_container(std::string_view id, Timeout timeout);
    net::awaitable<Expected<KillOutcome>> kill_container(std::string_view id, std::string_view signal,
                                                         Timeout timeout);
    // DELETE ?force=1&v=1. A 404 counts as success (already gone).
    net::awaitable<Expected<void>> remove_container(std::string_view id, Timeout timeout);
    // GET /containers/json?all=1&filters={"label":[...]}.
    net::awaitable<Expected<std::vector<ListedBox>>> list_containers(const std::vector<std::string>& label_filters,
                                                                     Timeout timeout);
    net::awaitable<Expected<std::unique_ptr<WaitHandle>>> begin_wait(std::string_view id, Timeout timeout);
    net::awaitable<Expected<std::unique_ptr<AttachSession>>> attach(std::string_view id, Timeout timeout);

    net::awaitable<Expected<ImageFacts>> inspect_image(std::string_view ref, Timeout timeout);
    // POST /images/create?fromSrc=-&repo=..&tag=.. streaming the tar file as the body.
    // Returns the new image ID ("sha256:...") from the progress stream.
    net::awaitable<Expected<std::string>> import_image(const std::filesystem::path& tar_file,
                                                       std::string_view repo, std::string_view tag,
                                                       Timeout timeout);
    // POST /images/create?fromImage=REF: the engine pulls REF (a digest reference, for PyBox) from
    // its registry. Returns the progress stream's text (JSON lines) of a 2xx answer: the engine
    // answers 200 before it knows how the pull ends, so a failure is an "error" line in it, for
    // the caller to read (daemon/registry/registry_answers.hpp).
    net::awaitable<Expected<std::string>> pull_image(std::string_view ref, Timeout timeout);
    // DELETE /images/{ref}?force=1 (404 counts as success).
    net::awaitable<Expected<void>> remove_image(std::string_view ref, Timeout timeout);
    // GET /images/{ref}/get: the image as a `docker save` tar, written to `tar_file` (created or
    // truncated), at most `max_bytes` ("engine_protocol" beyond).
    net::awaitable<Expected<void>> export_image(std::string_view ref, const std::filesystem::path& tar_file,
                                                std::uint64_t max_bytes, Timeout timeout);
    // POST /images/load?quiet=1 streaming such a tar as the body. Returns the loaded image ID
    // ("sha256:...") from the progress stream: the same ID the exporting engine holds.
    net::awaitable<Expected<std::string>> load_image(const std::filesystem::path& tar_file, Timeout timeout);

private:
    // POSTs the tar file as the body of `target` (already versioned); the text of a 2xx reply
    // (a stream of JSON progress lines), else the error.
    net::awaitable<Expected<std::string>> upload_tar(const std::string& target, const std::filesystem::path& tar_file,
                                                     Timeout timeout);
    // The image ID a progress stream of create or load ends with ("status" or "stream" text).
    static Expected<std::string> image_id_from_progress(std::string_view what, std::string_view text);
    std::string versioned(std::string_view target) const;
    // GET of a JSON object (inspect calls).
    net::awaitable<Expected<json::value>> get_object(std::string target, Timeout timeout);

    net::any_io_executor m_executor;
    std::unique_ptr<EngineDialer> m_dialer;
    KeptConnections m_kept;
    std::string m_api_version;
};

}  // namespace pybox::engine
