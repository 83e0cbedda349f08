// ApiRouter: maps one parsed HTTP request of the socket API (docs/api.md) to a call on the
// daemon's services and turns the outcome into a status and a JSON body. It knows nothing of
// sockets or HTTP framing (http_server.hpp does that), so it can be driven directly in tests.
//
// Ownership: borrows the services, which must outlive it. Executor: the caller's coroutine;
// every service call stays on the daemon's io_context. Failure: every outcome is a response;
// service errors map to a status through the API's error table (proto/error_codes.hpp).
#pragma once

#include "common/error.hpp"
#include "daemon/server/callers.hpp"
#include "daemon/server/services.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace pybox::daemon {

struct ApiRequest {
    std::string method;  // "GET", "POST", ...
    std::string target;  // the request target; a query string is ignored
    std::string body;
};

struct ApiResponse {
    unsigned status = 200;
    std::string body;  // one JSON document
    std::optional<std::chrono::seconds> retry_after = {};  // the Retry-After header, when set
    // POST /v1/runs: why the run's receipt was not kept, for the proto::k_receipt_not_kept_header
    // of an unstreamed answer and the receipt event of a streamed one.
    std::optional<std::string> receipt_not_kept = {};
};

// The answer for `error`: its status and retryable flag from proto::find_api_error_code(), and
// its Retry-After from proto::retry_after_for(). A code not in that table is a bug: it is
// logged to stderr and answered as "internal_error" (500).
ApiResponse error_response(const Error& error);

class ApiRouter {
public:
    explicit ApiRouter(DaemonServices services);

    // `client_gone` fires when the client disconnects; a run then kills and removes its box.
    // A run is the caller's (its uid labels the box), and so is its receipt, which the run
    // service issues (run/issuing_run.hpp); a caller who is not admin is refused (403
    // forbidden) what manages the engine or the images, and sees only its own attempts and receipts.
    // `run_events` (may be null) is told what a POST /v1/runs does as it goes (a streamed run);
    // the response is the same either way.
    net::awaitable<ApiResponse> handle(ApiRequest request, const Caller& caller, net::cancellation_slot client_gone,
                                       RunObserver* run_events = nullptr);

private:
    net::awaitable<ApiResponse> run(const std::string& body, std::uint32_t owner_uid,
                                    net::cancellation_slot client_gone, RunObserver* events);
    net::awaitable<ApiResponse> repair(const std::string& body, std::uint32_t owner_uid,
                                       net::cancellation_slot client_gone);
    net::awaitable<ApiResponse> setup(const std::string& body);
    net::awaitable<ApiResponse> build_image(const std::string& body);
    net::awaitable<ApiResponse> remove_image(const std::string& body);

    DaemonServices m_services;
};

}  // namespace pybox::daemon
