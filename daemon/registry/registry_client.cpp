#include "daemon/registry/registry_client.hpp"

#include "common/api_error_codes.hpp"
#include "common/sha256.hpp"
#include "daemon/registry/registry_answers.hpp"
#include "util/host_address.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>
#include <charconv>
#include <vector>

namespace pybox::registry {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
constexpr std::size_t k_chunk_bytes = 64 * 1024;
constexpr std::uint16_t k_http_port = 80;
constexpr std::string_view k_digest_header = "Docker-Content-Digest";

struct Answer {
    unsigned status = 0;
    std::string location;
    std::string content_digest;
    std::optional<std::uint64_t> content_length;
    std::string body;
};

class Exchange {
public:
    Exchange(net::any_io_executor executor, const RegistryHost& host, http::verb method, std::string target)
        : m_stream(std::move(executor)), m_host(host), m_method(method), m_target(std::move(target))
    {
    }

    std::string what() const { return std::string(http::to_string(m_method)) + " " + m_target; }

    Error failure(const beast::error_code& ec) const
    {
        if (ec == beast::error::timeout)
            return make_error(api_error::k_registry_timeout, "The registry at " + m_host.authority() +
                                                                 " did not finish " + what() + " in time.");
        if (ec == http::error::body_limit)
            return make_error(api_error::k_registry_protocol, "The registry at " + m_host.authority() + " answered " +
                                                                  what() + " with more than " +
                                                                  std::to_string(k_max_registry_answer_bytes) + " bytes.");
        return make_error(api_error::k_registry_protocol, "The exchange " + what() + " with the registry at " +
                                                              m_host.authority() + " failed: " + ec.message() + ".");
    }

    Error unexpected(const Answer& answer) const
    {
        const std::string errors = describe_registry_errors(answer.body);
        return make_error(api_error::k_registry_error, "The registry at " + m_host.authority() + " answered " +
                                                           what() + " with " + std::to_string(answer.status) +
                                                           (errors.empty() ? std::string() : ": " + errors) + ".");
    }

    // Connects and sends the header; the body, if any, follows through write_body().
    net::awaitable<Expected<void>> begin(Timeout timeout, std::optional<std::uint64_t> body_size,
                                         std::string_view content_type)
    {
        m_stream.expires_after(timeout);
        const net::ip::tcp::endpoint endpoint(net::ip::make_address(m_host.host), m_host.port.value_or(k_http_port));
        if (auto [ec] = co_await m_stream.async_connect(endpoint, use_tuple); ec) {
            if (ec == beast::error::timeout) co_return failure(ec);
            co_return make_error(api_error::k_registry_unreachable,
                                 "The registry at " + m_host.authority() + " cannot be reached: " + ec.message() + ".");
        }
        http::request<http::empty_body> request{m_method, m_target, 11};
        request.set(http::field::host, m_host.authority());
        request.set(http::field::user_agent, "pyboxd");
        if (body_size) {
            request.content_length(*body_size);
            request.set(http::field::content_type, content_type);
        }
        http::request_serializer<http::empty_body> serializer{request};
        if (auto [ec, n] = co_await http::async_write_header(m_stream, serializer, use_tuple); ec)
            co_return failure(ec);
        co_return Expected<void>{};
    }

    net::awaitable<Expected<void>> write_body(std::string_view bytes)
    {
        if (auto [ec, n] = co_await net::async_write(m_stream, net::buffer(bytes.data(), bytes.size()), use_tuple); ec)
            co_return failure(ec);
        co_return Expected<void>{};
    }

    net::awaitable<Expected<Answer>> read_answer()
    {
        beast::flat_buffer buffer;
        http::response_parser<http::string_body> parser;
        parser.body_limit(k_max_registry_answer_bytes);
        if (m_method == http::verb::head) parser.skip(true);
        if (auto [ec, n] = co_await http::async_read(m_stream, buffer, parser, use_tuple); ec) co_return failure(ec);
        auto& response = parser.get();
        Answer answer;
        answer.status = response.result_int();
        answer.location = std::string(response[http::field::location]);
        answer.content_digest = std::string(response[k_digest_header]);
        if (const auto length = response[http::field::content_length]; !length.empty()) {
            std::uint64_t value = 0;
            const auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), value);
            if (ec == std::errc() && end == length.data() + length.size()) answer.content_length = value;
        }
        answer.body = std::move(response.body());
        co_return answer;
    }

    // A request without a body, and its answer.
    net::awaitable<Expected<Answer>> bodiless(Timeout timeout)
    {
        if (auto begun = co_await begin(timeout, std::nullopt, {}); !begun) co_return begun.error();
        co_return co_await read_answer();
    }

    // The registry's digest of what it stored must be `digest`.
    Expected<void> check_digest(const Answer& answer, std::string_view digest) const
    {
        if (answer.content_digest != digest)
            return make_error(api_error::k_registry_protocol,
                              "The registry at " + m_host.authority() + " answered " + what() + " with " +
                                  std::string(k_digest_header) + " \"" + answer.content_digest.substr(0, 80) +
                                  "\", not " + std::string(digest) + ".");
        return {};
    }

private:
    beast::tcp_stream m_stream;
    const RegistryHost& m_host;
    http::verb m_method;
    std::string m_target;
};

}  // namespace

RegistryClient::RegistryClient(net::any_io_executor executor, RegistryHost host)
    : m_executor(std::move(executor)), m_host(std::move(host))
{
}

Expected<std::unique_ptr<RegistryClient>> RegistryClient::make(net::any_io_executor executor, RegistryHost host)
{
    if (!util::is_ip_address(host.host) || !util::is_loopback_host(host.host))
        return make_error(api_error::k_registry_not_loopback,
                          "The registry " + host.authority() +
                              " is not on a loopback IP address (127.0.0.1, [::1]): PyBox speaks plain HTTP to a "
                              "registry only on this machine, and HTTPS registries are not supported yet.");
    return std::unique_ptr<RegistryClient>(new RegistryClient(std::move(executor), std::move(host)));
}

net::awaitable<Expected<std::optional<std::uint64_t>>> RegistryClient::blob_size(std::string_view repository,
                                                                                 std::string_view digest,
                                                                                 Timeout timeout)
{
    Exchange head(m_executor, m_host, http::verb::head, "/v2/" + std::string(repository) + "/blobs/" + std::string(digest));
    auto answer = co_await head.bodiless(timeout);
    if (!answer) co_return answer.error();
    if (answer->status == 404) co_return std::optional<std::uint64_t>();
    if (answer->status != 200) co_return head.unexpected(*answer);
    if (auto same = head.check_digest(*answer, digest); !same) co_return same.error();
    if (!answer->content_length)
        co_return make_error(api_error::k_registry_protocol, "The registry at " + m_host.authority() + " answered " +
                                                                 head.what() + " without a Content-Length.");
    co_return answer->content_length;
}

net::awaitable<Expected<void>> RegistryClient::upload_blob(std::string_view repository, const Blob& blob,
                                                           std::istream& in, std::uint64_t offset, Timeout timeout)
{
    Exchange start(m_executor, m_host, http::verb::post, "/v2/" + std::string(repository) + "/blobs/uploads/");
    auto started = co_await start.bodiless(timeout);
    if (!started) co_return started.error();
    if (started->status != 202) co_return start.unexpected(*started);
    auto target = upload_target(started->location, m_host.authority());
    if (!target) co_return target.error();

    Exchange put(m_executor, m_host, http::verb::put, with_digest_query(*target, blob.digest));
    if (auto begun = co_await put.begin(timeout, blob.size, "application/octet-stream"); !begun) co_return begun.error();
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    Sha256 hash;
    std::vector<char> chunk(k_chunk_bytes);
    for (std::uint64_t sent = 0; sent < blob.size;) {
        in.read(chunk.data(), static_cast<std::streamsize>(std::min<std::uint64_t>(chunk.size(), blob.size - sent)));
        const auto got = static_cast<std::size_t>(in.gcount());
        if (got == 0)
            co_return make_error(api_error::k_io_error, "The image export ended inside blob " + blob.digest + ".");
        const std::string_view bytes(chunk.data(), got);
        hash.update(bytes);
        if (auto written = co_await put.write_body(bytes); !written) co_return written.error();
        sent += got;
    }
    const std::string sent_digest = "sha256:" + hash.finish_hex();
    auto answer = co_await put.read_answer();
    if (sent_digest != blob.digest)
        co_return make_error(api_error::k_image_save_invalid, "The image export's bytes of " + blob.digest +
                                                                  " have the digest " + sent_digest + ".");
    if (!answer) co_return answer.error();
    if (answer->status != 201) co_return put.unexpected(*answer);
    co_return put.check_digest(*answer, blob.digest);
}

net::awaitable<Expected<void>> RegistryClient::put_manifest(std::string_view repository, const ImageManifest& manifest,
                                                            Timeout timeout)
{
    Exchange put(m_executor, m_host, http::verb::put, "/v2/" + std::string(repository) + "/manifests/" + manifest.digest);
    if (auto begun = co_await put.begin(timeout, manifest.bytes.size(), k_manifest_media_type); !begun)
        co_return begun.error();
    if (auto written = co_await put.write_body(manifest.bytes); !written) co_return written.error();
    auto answer = co_await put.read_answer();
    if (!answer) co_return answer.error();
    if (answer->status != 201) co_return put.unexpected(*answer);
    co_return put.check_digest(*answer, manifest.digest);
}

}  // namespace pybox::registry
