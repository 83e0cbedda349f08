#include "daemon/server/api_router.hpp"

#include "proto/answers.hpp"
#include "proto/api.hpp"
#include "proto/error_codes.hpp"
#include "proto/json_text.hpp"
#include "proto/receipt.hpp"
#include "proto/run_request.hpp"
#include "proto/setup_request.hpp"

#include <iostream>
#include <string_view>
#include <utility>

namespace pybox::daemon {

namespace {

namespace json = boost::json;

ApiResponse json_response(const json::value& value) { return {200, proto::to_json_text(value)}; }

template <class Answer>
ApiResponse from_expected(const Expected<Answer>& result)
{
    return result ? json_response(proto::to_json(*result)) : error_response(result.error());
}

enum class Method { get, post };

struct Route {
    std::string_view path;
    Method method;
};

constexpr Route k_routes[] = {
    {"/v1/ping", Method::get},       {"/v1/runs", Method::post},     {"/v1/vm/status", Method::get},
    {"/v1/vm/start", Method::post},  {"/v1/vm/stop", Method::post},  {"/v1/setup", Method::post},
    {"/v1/images", Method::get},     {"/v1/attempts", Method::get},
};

std::string_view method_name(Method method) { return method == Method::get ? "GET" : "POST"; }

}  // namespace

ApiResponse error_response(const Error& error)
{
    if (const auto* row = proto::find_api_error_code(error.code))
        return {row->http_status,
                proto::to_json_text(proto::to_json(proto::ErrorAnswer{error.code, error.message, row->retryable})),
                proto::retry_after_for(error.code)};
    std::cerr << "pyboxd: error code " << error.code << " is not in the API's table (proto/error_codes.cpp); "
              << "answering internal_error\n";
    return error_response(make_error("internal_error", error.message));
}

ApiRouter::ApiRouter(RunService& runs, EngineControl& engine, ImageService& images, AttemptRecords& attempts)
    : m_runs(runs), m_engine(engine), m_images(images), m_attempts(attempts)
{
}

net::awaitable<ApiResponse> ApiRouter::handle(ApiRequest request, net::cancellation_slot client_gone)
{
    const std::string_view target = request.target;
    const std::string_view path = target.substr(0, target.find('?'));
    const Route* route = nullptr;
    for (const auto& candidate : k_routes)
        if (candidate.path == path) route = &candidate;
    if (route == nullptr)
        co_return error_response(make_error("no_such_endpoint", "There is no endpoint " + std::string(path) +
                                                                    "; see docs/api.md."));
    if (request.method != method_name(route->method))
        co_return error_response(make_error("method_not_allowed",
                                            std::string(path) + " accepts only " +
                                                std::string(method_name(route->method)) + "."));

    if (path == "/v1/ping")
        co_return json_response(proto::to_json(proto::PingAnswer{true, "pyboxd", PYBOX_VERSION,
                                                                 std::string(proto::k_api_version)}));
    if (path == "/v1/runs") co_return co_await run(request.body, client_gone);
    if (path == "/v1/vm/status") co_return json_response(proto::to_json(co_await m_engine.status()));
    if (path == "/v1/vm/start") co_return from_expected(co_await m_engine.start());
    if (path == "/v1/vm/stop") co_return from_expected(co_await m_engine.stop());
    if (path == "/v1/setup") co_return co_await setup(request.body);
    if (path == "/v1/attempts") co_return from_expected(m_attempts.list());
    co_return from_expected(co_await m_images.list());
}

net::awaitable<ApiResponse> ApiRouter::run(const std::string& body, net::cancellation_slot client_gone)
{
    auto request = proto::parse_run_request(body);
    if (!request) co_return error_response(request.error());
    auto receipt = co_await m_runs.run(std::move(*request), client_gone);
    if (!receipt) co_return error_response(receipt.error());
    co_return json_response(proto::receipt_to_json(*receipt));
}

net::awaitable<ApiResponse> ApiRouter::setup(const std::string& body)
{
    auto request = proto::parse_setup_request(body);
    if (!request) co_return error_response(request.error());
    co_return from_expected(co_await m_images.setup(std::move(request->images), request->refresh_lock));
}

}  // namespace pybox::daemon
