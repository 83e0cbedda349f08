#include "common/version.hpp"
#include "common/api_error_codes.hpp"
#include "daemon/server/api_router.hpp"

#include "proto/answers.hpp"
#include "proto/api.hpp"
#include "proto/error_codes.hpp"
#include "proto/image_request.hpp"
#include "proto/receipt.hpp"
#include "proto/run_request.hpp"
#include "proto/setup_request.hpp"
#include "util/json_writer.hpp"

#include <iostream>
#include <string_view>
#include <utility>

namespace pybox::daemon {

namespace {

namespace json = boost::json;

ApiResponse json_response(const json::value& value) { return {200, util::to_json_text(value)}; }

template <class Answer>
ApiResponse from_expected(const Expected<Answer>& result)
{
    return result ? json_response(proto::to_json(*result)) : error_response(result.error());
}

enum class Method { get, post };

// Who may call a route: everyone the socket admits, or only an admin (callers.hpp).
enum class Access { caller, admin };

struct Route {
    std::string_view path;  // a path ending in '/' takes one more part: GET /v1/receipts/<run id>
    Method method;
    Access access = Access::caller;
};

bool route_matches(std::string_view route, std::string_view path)
{
    if (!route.ends_with('/')) return route == path;
    return path.starts_with(route) && path.size() > route.size() && path.find('/', route.size()) == std::string_view::npos;
}

constexpr Route k_routes[] = {
    {"/v1/ping", Method::get},
    {"/v1/runs", Method::post},
    {"/v1/repair", Method::post},
    {"/v1/vm/status", Method::get},
    {"/v1/vm/start", Method::post, Access::admin},
    {"/v1/vm/stop", Method::post, Access::admin},
    {"/v1/setup", Method::post, Access::admin},
    {"/v1/images", Method::get},
    {"/v1/attempts", Method::get},
    {"/v1/receipts", Method::get},
    {"/v1/receipts/", Method::get},
    {"/v1/images/build", Method::post, Access::admin},
    {"/v1/images/remove", Method::post, Access::admin},
    {"/v1/setup/progress", Method::get},
    {"/v1/doctor", Method::get},
};

std::string_view method_name(Method method) { return method == Method::get ? "GET" : "POST"; }

}  // namespace

ApiResponse error_response(const Error& error)
{
    if (const auto* row = proto::find_api_error_code(error.code))
        return {row->http_status,
                util::to_json_text(proto::to_json(proto::ErrorAnswer{error.code, error.message, row->retryable})),
                proto::retry_after_for(error.code)};
    std::cerr << "pyboxd: error code " << error.code << " is not in the API's table (proto/error_codes.cpp); "
              << "answering internal_error\n";
    return error_response(make_error(api_error::k_internal_error, error.message));
}

ApiRouter::ApiRouter(DaemonServices services) : m_services(services) {}

net::awaitable<ApiResponse> ApiRouter::handle(ApiRequest request, const Caller& caller,
                                              net::cancellation_slot client_gone, RunObserver* run_events)
{
    const std::string_view target = request.target;
    const std::string_view path = target.substr(0, target.find('?'));
    const Route* route = nullptr;
    for (const auto& candidate : k_routes)
        if (route_matches(candidate.path, path)) route = &candidate;
    if (route == nullptr)
        co_return error_response(make_error(api_error::k_no_such_endpoint, "There is no endpoint " + std::string(path) +
                                                                    "; see docs/api.md."));
    if (request.method != method_name(route->method))
        co_return error_response(make_error(api_error::k_method_not_allowed,
                                            std::string(path) + " accepts only " +
                                                std::string(method_name(route->method)) + "."));
    if (route->access == Access::admin && !caller.admin)
        co_return error_response(make_error(
            api_error::k_forbidden, "This is the system pyboxd, whose engine and images only root manages (" + std::string(path) +
                             "): ask an administrator to run it with sudo, or run your own pyboxd (docs/install.md)."));
    // An admin sees every user's attempts and receipts; anyone else their own.
    const std::optional<std::uint32_t> viewer = caller.admin ? std::nullopt : std::optional(caller.uid);

    if (path == "/v1/ping")
        co_return json_response(proto::to_json(proto::PingAnswer{true, "pyboxd", pybox::version(),
                                                                 std::string(proto::k_api_version)}));
    if (path == "/v1/runs") co_return co_await run(request.body, caller.uid, client_gone, run_events);
    if (path == "/v1/repair") co_return co_await repair(request.body, caller.uid, client_gone);
    if (path == "/v1/vm/status") co_return json_response(proto::to_json(co_await m_services.engine.status()));
    if (path == "/v1/vm/start") co_return from_expected(co_await m_services.engine.start());
    if (path == "/v1/vm/stop") co_return from_expected(co_await m_services.engine.stop());
    if (path == "/v1/setup") co_return co_await setup(request.body);
    if (path == "/v1/setup/progress") co_return json_response(proto::to_json(m_services.images.progress()));
    if (path == "/v1/attempts") co_return from_expected(m_services.attempts.list(viewer));
    if (path == "/v1/receipts") co_return from_expected(m_services.receipts.list(viewer));
    if (route->path == "/v1/receipts/") {
        auto receipt = m_services.receipts.get(std::string(path.substr(route->path.size())), viewer);
        co_return receipt ? json_response(*receipt) : error_response(receipt.error());
    }
    if (path == "/v1/doctor") co_return json_response(proto::to_json(co_await m_services.doctor.check(viewer)));
    if (path == "/v1/images/build") co_return co_await build_image(request.body);
    if (path == "/v1/images/remove") co_return co_await remove_image(request.body);
    co_return from_expected(co_await m_services.images.list());
}

net::awaitable<ApiResponse> ApiRouter::run(const std::string& body, std::uint32_t owner_uid,
                                           net::cancellation_slot client_gone, RunObserver* events)
{
    auto request = proto::parse_run_request(body);
    if (!request) co_return error_response(request.error());
    auto answer = co_await m_services.runs.run(std::move(*request), owner_uid, client_gone, events);
    if (!answer) co_return error_response(answer.error());
    // The body is written around the receipt's issued text: the bytes kept, answered and streamed.
    ApiResponse response{200, proto::run_answer_text(*answer)};
    response.receipt_not_kept = answer->receipt_not_kept;
    co_return response;
}

net::awaitable<ApiResponse> ApiRouter::repair(const std::string& body, std::uint32_t owner_uid,
                                              net::cancellation_slot client_gone)
{
    auto request = proto::parse_repair_request(body);
    if (!request) co_return error_response(request.error());
    co_return from_expected(co_await m_services.repair.repair(std::move(*request), owner_uid, client_gone));
}

net::awaitable<ApiResponse> ApiRouter::setup(const std::string& body)
{
    auto request = proto::parse_setup_request(body);
    if (!request) co_return error_response(request.error());
    co_return from_expected(co_await m_services.images.setup(std::move(request->images), request->refresh_lock));
}

net::awaitable<ApiResponse> ApiRouter::build_image(const std::string& body)
{
    auto request = proto::parse_image_build_request(body);
    if (!request) co_return error_response(request.error());
    co_return from_expected(co_await m_services.images.build_own(std::move(request->name), std::move(request->recipe)));
}

net::awaitable<ApiResponse> ApiRouter::remove_image(const std::string& body)
{
    auto request = proto::parse_image_remove_request(body);
    if (!request) co_return error_response(request.error());
    co_return from_expected(co_await m_services.images.remove_own(std::move(request->name)));
}

}  // namespace pybox::daemon
