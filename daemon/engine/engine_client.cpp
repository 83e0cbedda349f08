#include "daemon/engine/engine_client.hpp"

#include "common/limits.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <stdexcept>
#include <utility>

namespace pybox::engine {

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using namespace net::experimental::awaitable_operators;
using TimedStream = beast::basic_stream<net::local::stream_protocol, net::any_io_executor>;
using Clock = std::chrono::steady_clock;
using Response = http::response<http::string_body>;

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
constexpr std::string_view k_host = "docker";
// Read and upload chunk size; memory per call, not a policy limit.
constexpr std::size_t k_chunk_bytes = 64 * 1024;
// How much of a non-JSON error body is quoted in a message.
constexpr std::size_t k_quoted_body_chars = 200;

std::string url_encode(std::string_view text)
{
    static constexpr char k_hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if ((byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') || (byte >= '0' && byte <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            out += c;
        } else {
            out += '%';
            out += k_hex[byte >> 4];
            out += k_hex[byte & 0x0F];
        }
    }
    return out;
}

Error io_error(const beast::error_code& ec, std::string_view what)
{
    if (ec == beast::error::timeout || ec == net::error::timed_out) {
        return make_error("engine_timeout", std::string(what) + ": the engine did not answer in time");
    }
    if (ec == http::error::body_limit) {
        return make_error("engine_protocol", std::string(what) + ": the engine's answer is larger than " +
                                                 std::to_string(limits::k_max_engine_response_bytes) + " bytes");
    }
    return make_error("engine_protocol", std::string(what) + ": " + ec.message());
}

Error cancelled_error(std::string_view what)
{
    return make_error("cancelled", std::string(what) + ": cancelled");
}

json::value parse_lenient(std::string_view text)
{
    boost::system::error_code ec;
    json::value value = json::parse(text, ec);
    return ec ? json::value() : value;
}

// A finished exchange: the status, the body parsed leniently and the raw text for messages.
struct Reply {
    std::string what;  // "GET /v1.41/info", for messages
    unsigned status = 0;
    json::value body;
    std::string text;
};

Reply make_reply(std::string what, Response&& response)
{
    Reply reply{std::move(what), response.result_int(), {}, std::move(response.body())};
    reply.body = parse_lenient(reply.text);
    return reply;
}

Error status_error(const Reply& reply)
{
    std::string message;
    if (const auto* object = reply.body.if_object()) {
        if (const auto* text = object->if_contains("message"); text && text->is_string()) {
            message = std::string(text->get_string());
        }
    }
    if (message.empty()) {
        message = reply.text.substr(0, k_quoted_body_chars);
    }
    const std::string sentence =
        reply.what + ": the engine answered " + std::to_string(reply.status) + (message.empty() ? "" : ": " + message);
    return make_error(reply.status == 404 ? "not_found" : "engine_error", sentence);
}

Expected<void> require_success(const Reply& reply)
{
    if (reply.status / 100 == 2) {
        return {};
    }
    return status_error(reply);
}

Expected<json::value> require_json(const Reply& reply, json::kind kind)
{
    if (auto ok = require_success(reply); !ok) {
        return ok.error();
    }
    if (reply.body.kind() != kind) {
        return make_error("engine_protocol", reply.what + ": the engine's answer is not the expected JSON");
    }
    return reply.body;
}

std::optional<std::pair<unsigned, unsigned>> parse_api_version(std::string_view text)
{
    const auto dot = text.find('.');
    if (dot == std::string_view::npos) {
        return std::nullopt;
    }
    const auto parse = [](std::string_view part) -> std::optional<unsigned> {
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
        if (part.empty() || ec != std::errc() || end != part.data() + part.size()) {
            return std::nullopt;
        }
        return value;
    };
    const auto major = parse(text.substr(0, dot));
    const auto minor = parse(text.substr(dot + 1));
    if (!major || !minor) {
        return std::nullopt;
    }
    return std::pair{*major, *minor};
}

http::request<http::string_body> make_request(http::verb method, const std::string& target)
{
    http::request<http::string_body> request{method, target, 11};
    request.set(http::field::host, k_host);
    return request;
}

void init_parser(http::response_parser<http::string_body>& parser)
{
    // Beast's default header limit (8 KiB) applies; the body is bounded here.
    parser.body_limit(limits::k_max_engine_response_bytes);
}

// Dials and arms the stream with the exchange's deadline.
net::awaitable<Expected<TimedStream>> open_stream(EngineDialer& dialer, Clock::time_point deadline,
                                                  Timeout timeout)
{
    auto socket = co_await dialer.dial(timeout);
    if (!socket) {
        co_return Expected<TimedStream>(boost::system::in_place_error, socket.error());
    }
    TimedStream stream(std::move(*socket));
    stream.expires_at(deadline);
    co_return stream;
}

std::string describe_request(http::verb method, std::string_view target)
{
    return std::string(http::to_string(method)) + " " + std::string(target);
}

// One request and its whole response over a fresh connection, within `timeout`.
net::awaitable<Expected<Response>> exchange_raw(EngineDialer& dialer, http::verb method, const std::string& target,
                                                const json::value* body, Timeout timeout)
{
    const std::string what = describe_request(method, target);
    const auto deadline = Clock::now() + timeout;
    auto stream = co_await open_stream(dialer, deadline, timeout);
    if (!stream) {
        co_return stream.error();
    }
    auto request = make_request(method, target);
    if (body != nullptr) {
        request.set(http::field::content_type, "application/json");
        request.body() = json::serialize(*body);
    }
    request.prepare_payload();
    if (auto [ec, n] = co_await http::async_write(*stream, request, use_tuple); ec) {
        co_return io_error(ec, what);
    }
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    init_parser(parser);
    if (auto [ec, n] = co_await http::async_read(*stream, buffer, parser, use_tuple); ec) {
        co_return io_error(ec, what);
    }
    co_return parser.release();
}

net::awaitable<Expected<Reply>> exchange(EngineDialer& dialer, http::verb method, const std::string& target,
                                         const json::value* body, Timeout timeout)
{
    auto response = co_await exchange_raw(dialer, method, target, body, timeout);
    if (!response) {
        co_return response.error();
    }
    co_return make_reply(describe_request(method, target), std::move(*response));
}

// Sends a bodiless request and reads the response header only; on a status outside
// `accepted` the (bounded) body is read too and the error returned.
struct OpenedStream {
    TimedStream stream;
    beast::flat_buffer buffer;
    std::unique_ptr<http::response_parser<http::string_body>> parser;
};

// TimedStream's catch-all constructor hides result's converting constructor from Error.
Expected<OpenedStream> failed(Error error)
{
    return Expected<OpenedStream>(boost::system::in_place_error, std::move(error));
}

net::awaitable<Expected<OpenedStream>> open_and_read_header(EngineDialer& dialer,
                                                            http::request<http::string_body> request,
                                                            const std::vector<unsigned>& accepted,
                                                            Timeout timeout)
{
    const std::string what = describe_request(request.method(), request.target());
    const auto deadline = Clock::now() + timeout;
    auto stream = co_await open_stream(dialer, deadline, timeout);
    if (!stream) {
        co_return failed(stream.error());
    }
    request.prepare_payload();
    if (auto [ec, n] = co_await http::async_write(*stream, request, use_tuple); ec) {
        co_return failed(io_error(ec, what));
    }
    OpenedStream opened{std::move(*stream), {}, std::make_unique<http::response_parser<http::string_body>>()};
    init_parser(*opened.parser);
    if (auto [ec, n] = co_await http::async_read_header(opened.stream, opened.buffer, *opened.parser, use_tuple);
        ec) {
        co_return failed(io_error(ec, what));
    }
    const unsigned status = opened.parser->get().result_int();
    if (std::find(accepted.begin(), accepted.end(), status) == accepted.end()) {
        if (!opened.parser->is_done()) {
            if (auto [ec, n] = co_await http::async_read(opened.stream, opened.buffer, *opened.parser, use_tuple);
                ec) {
                co_return failed(io_error(ec, what));
            }
        }
        co_return failed(status_error(make_reply(what, opened.parser->release())));
    }
    co_return opened;
}

class UnixSocketDialer final : public EngineDialer {
public:
    UnixSocketDialer(net::any_io_executor executor, std::filesystem::path socket_path)
        : m_executor(std::move(executor)), m_socket_path(std::move(socket_path)) {}

    net::awaitable<Expected<Stream>> dial(Timeout timeout) override
    {
        net::local::stream_protocol::endpoint endpoint;
        try {
            endpoint = net::local::stream_protocol::endpoint(m_socket_path.string());
        } catch (const boost::system::system_error& e) {
            co_return make_error("engine_unreachable", "cannot use " + describe() + ": " + e.code().message());
        }
        Stream socket(m_executor);
        net::steady_timer timer(m_executor, timeout);
        auto outcome = co_await (socket.async_connect(endpoint, use_tuple) || timer.async_wait(use_tuple));
        if (outcome.index() == 1) {
            co_return make_error("engine_timeout", "connecting to " + describe() + " timed out");
        }
        if (const auto [ec] = std::get<0>(outcome); ec) {
            co_return make_error("engine_unreachable", "cannot connect to " + describe() + ": " + ec.message());
        }
        co_return socket;
    }

    std::string describe() const override { return "unix://" + m_socket_path.string(); }

private:
    net::any_io_executor m_executor;
    std::filesystem::path m_socket_path;
};

class EngineWaitHandle final : public WaitHandle {
public:
    EngineWaitHandle(std::string what, OpenedStream opened) : m_what(std::move(what)), m_opened(std::move(opened)) {}

    net::awaitable<Expected<WaitResult>> result(Timeout timeout) override
    {
        if (m_cancelled) {
            co_return cancelled_error(m_what);
        }
        m_opened.stream.expires_after(timeout);
        const auto [ec, n] =
            co_await http::async_read(m_opened.stream, m_opened.buffer, *m_opened.parser, use_tuple);
        if (m_cancelled) {
            co_return cancelled_error(m_what);
        }
        if (ec) {
            co_return io_error(ec, m_what);
        }
        const Reply reply = make_reply(m_what, m_opened.parser->release());
        const auto* object = reply.body.if_object();
        const json::value* code = object ? object->if_contains("StatusCode") : nullptr;
        boost::system::error_code number_ec;
        const auto status_code = code ? code->to_number<std::int64_t>(number_ec) : std::int64_t{0};
        if (code == nullptr || number_ec) {
            co_return make_error("engine_protocol", m_what + ": the engine's answer has no StatusCode");
        }
        WaitResult result{status_code, {}};
        if (const auto* error = object->if_contains("Error"); error && error->is_object()) {
            if (const auto* message = error->get_object().if_contains("Message"); message && message->is_string()) {
                result.error = std::string(message->get_string());
            }
        }
        co_return result;
    }

    void cancel() override
    {
        m_cancelled = true;
        m_opened.stream.close();
    }

private:
    std::string m_what;
    OpenedStream m_opened;
    bool m_cancelled = false;
};

class EngineAttachSession final : public AttachSession {
public:
    EngineAttachSession(std::string what, Stream socket, std::string pending)
        : m_what(std::move(what)), m_socket(std::move(socket)), m_pending(std::move(pending)) {}

    net::awaitable<Expected<void>> write_stdin(std::string_view bytes, Timeout timeout) override
    {
        net::steady_timer timer(m_socket.get_executor(), timeout);
        auto outcome =
            co_await (net::async_write(m_socket, net::buffer(bytes), use_tuple) || timer.async_wait(use_tuple));
        if (outcome.index() == 1) {
            co_return make_error("engine_timeout", m_what + ": writing stdin timed out");
        }
        if (const auto [ec, n] = std::get<0>(outcome); ec) {
            co_return m_cancelled ? cancelled_error(m_what) : io_error(ec, m_what + ": writing stdin");
        }
        co_return Expected<void>{};
    }

    Expected<void> close_stdin() override
    {
        boost::system::error_code ec;
        m_socket.shutdown(net::socket_base::shutdown_send, ec);
        if (ec) {
            return io_error(ec, m_what + ": closing stdin");
        }
        return {};
    }

    net::awaitable<Expected<std::string>> read_some() override
    {
        if (!m_pending.empty()) {
            co_return std::exchange(m_pending, {});
        }
        std::string chunk(k_chunk_bytes, '\0');
        const auto [ec, n] = co_await m_socket.async_read_some(net::buffer(chunk), use_tuple);
        if (m_cancelled) {
            co_return cancelled_error(m_what);
        }
        if (ec == net::error::eof) {
            co_return std::string();
        }
        if (ec) {
            co_return io_error(ec, m_what + ": reading output");
        }
        chunk.resize(n);
        co_return chunk;
    }

    void cancel() override
    {
        m_cancelled = true;
        boost::system::error_code ec;
        m_socket.close(ec);
    }

private:
    std::string m_what;
    Stream m_socket;
    std::string m_pending;
    bool m_cancelled = false;
};

}  // namespace

std::unique_ptr<EngineDialer> make_unix_socket_dialer(net::any_io_executor executor,
                                                      std::filesystem::path socket_path)
{
    return std::make_unique<UnixSocketDialer>(std::move(executor), std::move(socket_path));
}

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
    auto response = co_await exchange_raw(*m_dialer, http::verb::get, target, nullptr, timeout);
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
        co_return make_error("engine_protocol",
                             what + ": the engine advertised no usable Api-Version ('" + result.api_version + "')");
    }
    result.negotiated = *engine_version < *max_version ? result.api_version : std::string(k_max_api_version);
    m_api_version = result.negotiated;
    co_return result;
}

net::awaitable<Expected<json::value>> EngineClient::info(Timeout timeout)
{
    auto reply = co_await exchange(*m_dialer, http::verb::get, versioned("/info"), nullptr, timeout);
    if (!reply) {
        co_return reply.error();
    }
    co_return require_json(*reply, json::kind::object);
}

net::awaitable<Expected<EngineResponse>> EngineClient::request(std::string_view method, std::string_view target,
                                                               const json::value* body, Timeout timeout)
{
    const http::verb verb = http::string_to_verb(method);
    if (verb == http::verb::unknown) {
        throw std::invalid_argument("EngineClient::request: unknown HTTP method " + std::string(method));
    }
    auto reply = co_await exchange(*m_dialer, verb, versioned(target), body, timeout);
    if (!reply) {
        co_return reply.error();
    }
    co_return EngineResponse{reply->status, std::move(reply->body)};
}

net::awaitable<Expected<CreateResult>> EngineClient::create_container(const json::object& spec,
                                                                      std::string_view name, Timeout timeout)
{
    const std::string target = "/containers/create" + (name.empty() ? std::string() : "?name=" + url_encode(name));
    const json::value body = spec;
    auto reply = co_await exchange(*m_dialer, http::verb::post, versioned(target), &body, timeout);
    if (!reply) {
        co_return reply.error();
    }
    auto object = require_json(*reply, json::kind::object);
    if (!object) {
        co_return object.error();
    }
    const auto* id = object->get_object().if_contains("Id");
    if (id == nullptr || !id->is_string() || id->get_string().empty()) {
        co_return make_error("engine_protocol", reply->what + ": the engine's answer has no Id");
    }
    CreateResult result{std::string(id->get_string()), {}};
    if (const auto* warnings = object->get_object().if_contains("Warnings"); warnings && !warnings->is_null()) {
        if (!warnings->is_array()) {
            co_return make_error("engine_protocol", reply->what + ": Warnings is neither null nor an array");
        }
        for (const auto& warning : warnings->get_array()) {
            result.warnings.push_back(warning.is_string() ? std::string(warning.get_string()) : json::serialize(warning));
        }
    }
    co_return result;
}

net::awaitable<Expected<json::value>> EngineClient::inspect_container(std::string_view id, Timeout timeout)
{
    auto reply = co_await exchange(*m_dialer, http::verb::get, versioned("/containers/" + url_encode(id) + "/json"),
                                   nullptr, timeout);
    if (!reply) {
        co_return reply.error();
    }
    co_return require_json(*reply, json::kind::object);
}

net::awaitable<Expected<void>> EngineClient::start_container(std::string_view id, Timeout timeout)
{
    auto reply = co_await exchange(*m_dialer, http::verb::post, versioned("/containers/" + url_encode(id) + "/start"),
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
    std::string target = "/containers/" + url_encode(id) + "/kill";
    if (!signal.empty()) {
        target += "?signal=" + url_encode(signal);
    }
    auto reply = co_await exchange(*m_dialer, http::verb::post, versioned(target), nullptr, timeout);
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
    auto reply = co_await exchange(*m_dialer, http::verb::delete_,
                                   versioned("/containers/" + url_encode(id) + "?force=1&v=1"), nullptr, timeout);
    if (!reply) {
        co_return reply.error();
    }
    if (reply->status == 404) {
        co_return Expected<void>{};
    }
    co_return require_success(*reply);
}

net::awaitable<Expected<json::array>> EngineClient::list_containers(const std::vector<std::string>& label_filters,
                                                                    Timeout timeout)
{
    std::string target = "/containers/json?all=1";
    if (!label_filters.empty()) {
        json::array labels;
        for (const auto& label : label_filters) {
            labels.emplace_back(label);
        }
        target += "&filters=" + url_encode(json::serialize(json::object{{"label", std::move(labels)}}));
    }
    auto reply = co_await exchange(*m_dialer, http::verb::get, versioned(target), nullptr, timeout);
    if (!reply) {
        co_return reply.error();
    }
    auto array = require_json(*reply, json::kind::array);
    if (!array) {
        co_return array.error();
    }
    co_return std::move(array->get_array());
}

net::awaitable<Expected<std::unique_ptr<WaitHandle>>> EngineClient::begin_wait(std::string_view id, Timeout timeout)
{
    auto request =
        make_request(http::verb::post, versioned("/containers/" + url_encode(id) + "/wait?condition=next-exit"));
    std::string what = describe_request(request.method(), request.target());
    const std::vector<unsigned> accepted{200};
    auto opened = co_await open_and_read_header(*m_dialer, std::move(request), accepted, timeout);
    if (!opened) {
        co_return opened.error();
    }
    co_return std::make_unique<EngineWaitHandle>(std::move(what), std::move(*opened));
}

net::awaitable<Expected<std::unique_ptr<AttachSession>>> EngineClient::attach(std::string_view id, Timeout timeout)
{
    auto request = make_request(
        http::verb::post, versioned("/containers/" + url_encode(id) + "/attach?stream=1&stdin=1&stdout=1&stderr=1"));
    request.set(http::field::connection, "Upgrade");
    request.set(http::field::upgrade, "tcp");
    std::string what = describe_request(request.method(), request.target());
    const std::vector<unsigned> accepted{101, 200};  // 200: engines that answer without the upgrade
    auto opened = co_await open_and_read_header(*m_dialer, std::move(request), accepted, timeout);
    if (!opened) {
        co_return opened.error();
    }
    std::string pending = beast::buffers_to_string(opened->buffer.data());
    co_return std::make_unique<EngineAttachSession>(std::move(what), opened->stream.release_socket(),
                                                    std::move(pending));
}

net::awaitable<Expected<json::value>> EngineClient::inspect_image(std::string_view ref, Timeout timeout)
{
    auto reply = co_await exchange(*m_dialer, http::verb::get, versioned("/images/" + url_encode(ref) + "/json"),
                                   nullptr, timeout);
    if (!reply) {
        co_return reply.error();
    }
    co_return require_json(*reply, json::kind::object);
}

net::awaitable<Expected<std::string>> EngineClient::import_image(const std::filesystem::path& tar_file,
                                                                 std::string_view repo, std::string_view tag,
                                                                 Timeout timeout)
{
    std::string target = "/images/create?fromSrc=-&repo=" + url_encode(repo);
    if (!tag.empty()) {
        target += "&tag=" + url_encode(tag);
    }
    target = versioned(target);
    const std::string what = describe_request(http::verb::post, target);

    std::error_code size_ec;
    const std::uintmax_t size = std::filesystem::file_size(tar_file, size_ec);
    std::ifstream file(tar_file, std::ios::binary);
    if (size_ec || !file) {
        co_return make_error("io_error", "cannot read " + tar_file.string() +
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
            co_return make_error("io_error", tar_file.string() + " became shorter while it was uploaded");
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
    // The body is a stream of JSON objects: progress, then {"status":"sha256:..."} or {"error":...}.
    std::string image_id;
    std::string_view rest = reply.text;
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
            co_return make_error("engine_protocol", what + ": the progress stream holds a line that is not JSON");
        }
        if (const auto* error = object->if_contains("error")) {
            co_return make_error("engine_error", what + ": " +
                                                     (error->is_string() ? std::string(error->get_string())
                                                                         : json::serialize(*error)));
        }
        if (const auto* status = object->if_contains("status");
            status && status->is_string() && status->get_string().starts_with("sha256:")) {
            image_id = std::string(status->get_string());
        }
    }
    if (image_id.empty()) {
        co_return make_error("engine_protocol", what + ": the progress stream named no image ID");
    }
    co_return image_id;
}

net::awaitable<Expected<void>> EngineClient::remove_image(std::string_view ref, Timeout timeout)
{
    auto reply = co_await exchange(*m_dialer, http::verb::delete_, versioned("/images/" + url_encode(ref) + "?force=1"),
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
