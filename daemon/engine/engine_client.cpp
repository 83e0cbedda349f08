#include "daemon/engine/engine_client.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"
#include "daemon/engine/docker_facts.hpp"
#include "daemon/engine/engine_http.hpp"
#include "daemon/engine/engine_sessions.hpp"
#include "util/text.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/file_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <utility>

namespace pybox::engine {

using namespace detail;

EngineClient::EngineClient(net::any_io_executor executor, std::unique_ptr<EngineDialer> dialer)
    : m_executor(std::move(executor)), m_dialer(std::move(dialer)) {}

EngineClient::~EngineClient() = default;

std::string EngineClient::versioned(std::string_view target) const
{
    if (m_api_version.empty()) {
        return std::string(target);
    }
    return "/v" + m_api_version + std::string(target);
}

net::awaitable<Expected<PingResult>> EngineClient::ping(Timeout timeout)
{
    const std::string target = "/_ping";  // unversioned: it is how the version is learned
    auto response = co_await exchange_raw(*m_dialer, m_kept, http::verb::get, target, nullptr, timeout);
    if (!response) {
        co_return response.error();
    }
    const std::string what = describe_request(http::verb::get, target);
    PingResult result{std::string((*response)["Api-Version"]), {}, std::string((*response)["Ostype"])};
    if (auto ok = require_success(make_reply(what, std::move(*response))); !ok) {
        co_return ok.error();
    }
    const auto engine_version = parse_api_version(result.api_version);
    const auto max_version = parse_api_version(k_max_api_version);
    if (!engine_version || !max_version) {
        co_return make_error(api_error::k_engine_protocol,
                             what + ": the engine advertised no usable Api-Version ('" + result.api_version + "')");
    }
    result.negotiated = *engine_version < *max_version ? result.api_version : std::string(k_max_api_version);
    m_api_version = result.negotiated;
    co_return result;
}

net::awaitable<Expected<EngineInfo>> EngineClient::info(Timeout timeout)
{
    auto info = co_await get_object("/info", timeout);
    if (!info) co_return info.error();
    co_return docker_engine_info(std::move(*info));
}

net::awaitable<Expected<EngineResponse>> EngineClient::request(std::string_view method, std::string_view target,
                                                               const json::value* body, Timeout timeout)
{
    const http::verb verb = http::string_to_verb(method);
    if (verb == http::verb::unknown) {
        throw std::invalid_argument("EngineClient::request: unknown HTTP method " + std::string(method));
    }
    auto reply = co_await exchange(*m_dialer, m_kept, verb, versioned(target), body, timeout);
    if (!reply) {
        co_return reply.error();
    }
    co_return EngineResponse{reply->status, std::move(reply->body)};
}

net::awaitable<Expected<CreateResult>> EngineClient::create_container(const json::object& spec,
                                                                      std::string_view name, Timeout timeout)
{
    const std::string target = "/containers/create" + (name.empty() ? std::string() : "?name=" + util::url_encode(name));
    const json::value body = spec;
    auto reply = co_await exchange(*m_dialer, m_kept, http::verb::post, versioned(target), &body, timeout);
    if (!reply) {
        co_return reply.error();
    }
    auto object = require_json(*reply, json::kind::object);
    if (!object) {
        co_return object.error();
    }
    const auto* id = object->get_object().if_contains("Id");
    if (id == nullptr || !id->is_string() || id->get_string().empty()) {
        co_return make_error(api_error::k_engine_protocol, reply->what + ": the engine's answer has no Id");
    }
    CreateResult result{std::string(id->get_string()), {}};
    if (const auto* warnings = object->get_object().if_contains("Warnings"); warnings && !warnings->is_null()) {
        if (!warnings->is_array()) {
            co_return make_error(api_error::k_engine_protocol, reply->what + ": Warnings is neither null nor an array");
        }
        for (const auto& warning : warnings->get_array()) {
            result.warnings.push_back(warning.is_string() ? std::string(warning.get_string()) : json::serialize(warning));
        }
    }
    co_return result;
}

net::awaitable<Expected<json::value>> EngineClient::get_object(std::string target, Timeout timeout)
{
    auto reply = co_await exchange(*m_dialer, m_kept, http::verb::get, versioned(target), nullptr, timeout);
    if (!reply) {
        co_return reply.error();
    }
    co_return require_json(*reply, json::kind::object);
}

net::awaitable<Expected<BoxInspection>> EngineClient::inspect_container(std::string_view id, Timeout timeout)
{
    auto inspected = co_await get_object("/containers/" + util::url_encode(id) + "/json", timeout);
    if (!inspected) co_return inspected.error();
    co_return docker_inspection(std::move(*inspected));
}

net::awaitable<Expected<void>> EngineClient::start_container(std::string_view id, Timeout timeout)
{
    auto reply = co_await exchange(*m_dialer, m_kept, http::verb::post, versioned("/containers/" + util::url_encode(id) + "/start"),
                                   nullptr, timeout);
    if (!reply) {
        co_return reply.error();
    }
    if (reply->status == 304) {  // already started
        co_return Expected<void>{};
    }
    co_return require_success(*reply);
}

net::awaitable<Expected<KillOutcome>> EngineClient::kill_container(std::string_view id, std::string_view signal,
                                                                   Timeout timeout)
{
    std::string target = "/containers/" + util::url_encode(id) + "/kill";
    if (!signal.empty()) {
        target += "?signal=" + util::url_encode(signal);
    }
    auto reply = co_await exchange(*m_dialer, m_kept, http::verb::post, versioned(target), nullptr, timeout);
    if (!reply) {
        co_return reply.error();
    }
    if (reply->status == 409) {
        co_return KillOutcome::not_running;
    }
    if (auto ok = require_success(*reply); !ok) {
        co_return ok.error();
    }
    co_return KillOutcome::killed;
}

net::awaitable<Expected<void>> EngineClient::remove_container(std::string_view id, Timeout timeout)
{
    auto reply = co_await exchange(*m_dialer, m_kept, http::verb::delete_,
                                   versioned("/containers/" + util::url_encode(id) + "?force=1&v=1"), nullptr, timeout);
    if (!reply) {
        co_return reply.error();
    }
    if (reply->status == 404) {
        co_return Expected<void>{};
    }
    co_return require_success(*reply);
}

net::awaitable<Expected<std::vector<ListedBox>>> EngineClient::list_containers(const std::vector<std::string>& label_filters,
                                                                    Timeout timeout)
{
    std::string target = "/containers/json?all=1";
    if (!label_filters.empty()) {
        json::array labels;
        for (const auto& label : label_filters) {
            labels.emplace_back(label);
        }
        target += "&filters=" + util::url_encode(json::serialize(json::object{{"label", std::move(labels)}}));
    }
    auto reply = co_await exchange(*m_dialer, m_kept, http::verb::get, versioned(target), nullptr, timeout);
    if (!reply) {
        co_return reply.error();
    }
    auto array = require_json(*reply, json::kind::array);
    if (!array) {
        co_return array.error();
    }
    co_return docker_listed_boxes(array->get_array());
}

net::awaitable<Expected<std::unique_ptr<WaitHandle>>> EngineClient::begin_wait(std::string_view id, Timeout timeout)
{
    auto request =
        make_request(http::verb::post, versioned("/containers/" + util::url_encode(id) + "/wait?condition=next-exit"));
    std::string what = describe_request(request.method(), request.target());
    const std::vector<unsigned> accepted{200};
    auto opened = co_await open_and_read_header(*m_dialer, std::move(request), accepted, timeout);
    if (!opened) {
        co_return opened.error();
    }
    co_return make_wait_handle(std::move(what), std::move(*opened));
}

net::awaitable<Expected<std::unique_ptr<AttachSession>>> EngineClient::attach(std::string_view id, Timeout timeout)
{
    auto request = make_request(
        http::verb::post, versioned("/containers/" + util::url_encode(id) + "/attach?stream=1&stdin=1&stdout=1&stderr=1"));
    request.set(http::field::connection, "Upgrade");
    request.set(http::field::upgrade, "tcp");
    std::string what = describe_request(request.method(), request.target());
    const std::vector<unsigned> accepted{101, 200};  // 200: engines that answer without the upgrade
    auto opened = co_await open_and_read_header(*m_dialer, std::move(request), accepted, timeout);
    if (!opened) {
        co_return opened.error();
    }
    std::string pending = beast::buffers_to_string(opened->buffer.data());
    co_return make_attach_session(std::move(what), opened->stream.release_socket(), std::move(pending));
}

net::awaitable<Expected<ImageFacts>> EngineClient::inspect_image(std::string_view ref, Timeout timeout)
{
    auto inspected = co_await get_object("/images/" + util::url_encode(ref) + "/json", timeout);
    if (!inspected) co_return inspected.error();
    co_return docker_image_facts(std::move(*inspected));
}

net::awaitable<Expected<std::string>> EngineClient::import_image(const std::filesystem::path& tar_file,
                                                                 std::string_view repo, std::string_view tag,
                                                                 Timeout timeout)
{
    std::string target = "/images/create?fromSrc=-&repo=" + util::url_encode(repo);
    if (!tag.empty()) {
        target += "&tag=" + util::url_encode(tag);
    }
    target = versioned(target);
    auto text = co_await upload_tar(target, tar_file, timeout);
    if (!text) {
        co_return text.error();
    }
    co_return image_id_from_progress(describe_request(http::verb::post, target), *text);
}

net::awaitable<Expected<std::string>> EngineClient::load_image(const std::filesystem::path& tar_file, Timeout timeout)
{
    const std::string target = versioned("/images/load?quiet=1");
    auto text = co_await upload_tar(target, tar_file, timeout);
    if (!text) {
        co_return text.error();
    }
    co_return image_id_from_progress(describe_request(http::verb::post, target), *text);
}

net::awaitable<Expected<std::string>> EngineClient::upload_tar(const std::string& target,
                                                               const std::filesystem::path& tar_file, Timeout timeout)
{
    const std::string what = describe_request(http::verb::post, target);
    std::error_code size_ec;
    const std::uintmax_t size = std::filesystem::file_size(tar_file, size_ec);
    std::ifstream file(tar_file, std::ios::binary);
    if (size_ec || !file) {
        co_return make_error(api_error::k_io_error, "cannot read " + tar_file.string() +
                                             (size_ec ? ": " + size_ec.message() : std::string()));
    }

    const auto deadline = Clock::now() + timeout;
    auto stream = co_await open_stream(*m_dialer, deadline, timeout);
    if (!stream) {
        co_return stream.error();
    }
    http::request<http::empty_body> request{http::verb::post, target, 11};
    request.set(http::field::host, k_host);
    request.set(http::field::content_type, "application/x-tar");
    request.content_length(size);
    http::request_serializer<http::empty_body> serializer{request};
    if (auto [ec, n] = co_await http::async_write_header(*stream, serializer, use_tuple); ec) {
        co_return io_error(ec, what);
    }
    std::vector<char> chunk(k_chunk_bytes);
    for (std::uintmax_t sent = 0; sent < size;) {
        file.read(chunk.data(), static_cast<std::streamsize>(std::min<std::uintmax_t>(chunk.size(), size - sent)));
        const auto got = static_cast<std::size_t>(file.gcount());
        if (got == 0) {
            co_return make_error(api_error::k_io_error, tar_file.string() + " became shorter while it was uploaded");
        }
        if (auto [ec, n] = co_await net::async_write(*stream, net::buffer(chunk.data(), got), use_tuple); ec) {
            co_return io_error(ec, what);
        }
        sent += got;
    }

    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    init_parser(parser);
    if (auto [ec, n] = co_await http::async_read(*stream, buffer, parser, use_tuple); ec) {
        co_return io_error(ec, what);
    }
    const Reply reply = make_reply(what, parser.release());
    if (auto ok = require_success(reply); !ok) {
        co_return ok.error();
    }
    co_return reply.text;
}

Expected<std::string> EngineClient::image_id_from_progress(std::string_view what, std::string_view text)
{
    // A stream of JSON objects: progress, then {"status":"sha256:..."} (create) or
    // {"stream":"Loaded image ID: sha256:...\n"} (load), or {"error":...}.
    constexpr std::string_view k_loaded = "Loaded image ID: ";
    std::string image_id;
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto end = rest.find('\n');
        const std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
            continue;
        }
        const json::value event = parse_lenient(line);
        const auto* object = event.if_object();
        if (object == nullptr) {
            return make_error(api_error::k_engine_protocol, std::string(what) + ": the progress stream holds a line that is not JSON");
        }
        if (const auto* error = object->if_contains("error")) {
            return make_error(api_error::k_engine_error, std::string(what) + ": " +
                                                  (error->is_string() ? std::string(error->get_string())
                                                                      : json::serialize(*error)));
        }
        if (const auto* status = object->if_contains("status");
            status && status->is_string() && status->get_string().starts_with("sha256:")) {
            image_id = std::string(status->get_string());
        }
        if (const auto* loaded = object->if_contains("stream");
            loaded && loaded->is_string() && loaded->get_string().starts_with(k_loaded)) {
            std::string_view id(loaded->get_string());
            id.remove_prefix(k_loaded.size());
            image_id = std::string(id.substr(0, id.find_first_of(" \r\n")));
        }
    }
    if (!image_id.starts_with("sha256:")) {
        return make_error(api_error::k_engine_protocol, std::string(what) + ": the progress stream named no image ID");
    }
    return image_id;
}

net::awaitable<Expected<void>> EngineClient::export_image(std::string_view ref, const std::filesystem::path& tar_file,
                                                          std::uint64_t max_bytes, Timeout timeout)
{
    const std::string target = versioned("/images/" + util::url_encode(ref) + "/get");
    const std::string what = describe_request(http::verb::get, target);
    const auto deadline = Clock::now() + timeout;
    auto stream = co_await open_stream(*m_dialer, deadline, timeout);
    if (!stream) {
        co_return stream.error();
    }
    auto request = make_request(http::verb::get, target);
    if (auto [ec, n] = co_await http::async_write(*stream, request, use_tuple); ec) {
        co_return io_error(ec, what);
    }
    beast::flat_buffer buffer;
    http::response_parser<http::empty_body> header_parser;
    header_parser.body_limit(max_bytes);
    if (auto [ec, n] = co_await http::async_read_header(*stream, buffer, header_parser, use_tuple); ec) {
        co_return io_error(ec, what);
    }
    if (header_parser.get().result_int() / 100 != 2) {
        http::response_parser<http::string_body> error_parser{std::move(header_parser)};
        error_parser.body_limit(limits::k_max_engine_response_bytes);
        if (auto [ec, n] = co_await http::async_read(*stream, buffer, error_parser, use_tuple); ec) {
            co_return io_error(ec, what);
        }
        const Reply reply = make_reply(what, error_parser.release());
        co_return require_success(reply);
    }
    http::response_parser<http::file_body> parser{std::move(header_parser)};
    parser.body_limit(max_bytes);
    beast::error_code open_ec;
    parser.get().body().open(tar_file.c_str(), beast::file_mode::write, open_ec);
    if (open_ec) {
        co_return make_error(api_error::k_io_error, "cannot write " + tar_file.string() + ": " + open_ec.message());
    }
    if (auto [ec, n] = co_await http::async_read(*stream, buffer, parser, use_tuple); ec) {
        if (ec == http::error::body_limit) {
            co_return make_error(api_error::k_engine_protocol, what + ": the image is larger than " + std::to_string(max_bytes) +
                                                        " bytes");
        }
        co_return io_error(ec, what);
    }
    co_return Expected<void>{};
}

net::awaitable<Expected<std::string>> EngineClient::pull_image(std::string_view ref, Timeout timeout)
{
    auto reply = co_await exchange(*m_dialer, m_kept, http::verb::post,
                                   versioned("/images/create?fromImage=" + util::url_encode(ref)), nullptr, timeout);
    if (!reply) {
        co_return reply.error();
    }
    if (auto ok = require_success(*reply); !ok) {
        co_return ok.error();
    }
    co_return std::move(reply->text);
}

net::awaitable<Expected<void>> EngineClient::remove_image(std::string_view ref, Timeout timeout)
{
    auto reply = co_await exchange(*m_dialer, m_kept, http::verb::delete_, versioned("/images/" + util::url_encode(ref) + "?force=1"),
                                   nullptr, timeout);
    if (!reply) {
        co_return reply.error();
    }
    if (reply->status == 404) {
        co_return Expected<void>{};
    }
    co_return require_success(*reply);
}

}  // namespace pybox::engine
