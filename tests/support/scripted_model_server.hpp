// A scripted OpenAI-compatible chat-completions server for the model client's tests: HTTPS on
// 127.0.0.1 with a certificate of a CA the tests make (TestPki, through the openssl command), or
// plain HTTP, on a thread of its own. Each connection gets the next scripted answer (status, headers, body,
// and a delay before it is sent) and every request is recorded (path, headers, body, the SNI
// name and when it arrived) for the test to check its shape. Header-only, tests only.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <catch2/catch.hpp>

#include <openssl/ssl.h>

#include <chrono>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace pybox::test {

// Certificates made once per test run with the openssl command, in a folder of their own:
// a test CA and another CA, a certificate for localhost and 127.0.0.1 signed by each, and one
// for another host name signed by the test CA.
struct TestPki {
    std::filesystem::path dir;
    std::filesystem::path ca() const { return dir / "ca.pem"; }
    std::filesystem::path cert(const std::string& name) const { return dir / (name + ".pem"); }
    std::filesystem::path key(const std::string& name) const { return dir / (name + ".key"); }

    static const TestPki& get()
    {
        static const TestPki pki = make();
        return pki;
    }

private:
    static TestPki make()
    {
        TestPki pki;
        pki.dir = std::filesystem::temp_directory_path() /
                  ("pybox-unit-pki-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
        std::filesystem::create_directories(pki.dir);
        const std::string d = pki.dir.string();
        const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
        std::string script = "set -e; cd '" + d + "'\n";
        for (const std::string ca : {"ca", "other-ca"})
            script += "openssl req -x509 " + key + " -keyout " + ca + ".key -out " + ca + ".pem -days 2 -subj '/CN=PyBox test " +
                      ca + "' 2>/dev/null\n";
        const auto leaf = [&](const std::string& name, const std::string& ca, const std::string& names) {
            return "printf 'subjectAltName=" + names + "\\n' > " + name + ".ext\n" + "openssl req " + key + " -keyout " + name +
                   ".key -out " + name + ".csr -subj /CN=" + name + " 2>/dev/null\n" + "openssl x509 -req -in " + name +
                   ".csr -CA " + ca + ".pem -CAkey " + ca + ".key -CAcreateserial -days 2 -extfile " + name + ".ext -out " +
                   name + ".pem 2>/dev/null\n";
        };
        script += leaf("localhost", "ca", "DNS:localhost,IP:127.0.0.1");
        script += leaf("stranger", "other-ca", "DNS:localhost,IP:127.0.0.1");
        script += leaf("wrong-name", "ca", "DNS:other.example");
        const auto script_file = pki.dir / "make.sh";
        {
            std::ofstream(script_file) << script;
        }
        const std::string command = "/bin/sh '" + script_file.string() + "'";
        REQUIRE(std::system(command.c_str()) == 0);
        return pki;
    }
};

struct ScriptedAnswer {
    using Headers = std::vector<std::pair<std::string, std::string>>;
    ScriptedAnswer(unsigned answer_status, std::string answer_body, Headers answer_headers = {},
                   std::chrono::milliseconds answer_delay = std::chrono::milliseconds(0))
        : status(answer_status), body(std::move(answer_body)), headers(std::move(answer_headers)), delay(answer_delay)
    {
    }
    unsigned status;
    std::string body;
    Headers headers;
    std::chrono::milliseconds delay;
    bool chunked = false;  // the body sent with Transfer-Encoding: chunked, as a streamed answer is
};

struct RecordedRequest {
    std::string method;
    std::string target;
    std::string host;
    std::string authorization;
    std::string user_agent;
    std::string accept;
    std::string content_type;
    std::string body;
    std::string sni;
    std::chrono::steady_clock::time_point arrived;
};

class ScriptedModelServer {
public:
    // Serves HTTPS with `cert` (a TestPki name) and answers connections in turn with `script`; once
    // it is used up, every further request is answered 500.
    // An empty `cert` serves plain HTTP instead.
    ScriptedModelServer(const std::string& cert, std::vector<ScriptedAnswer> script)
        : m_context(boost::asio::ssl::context::tls_server), m_tls(!cert.empty()), m_script(script.begin(), script.end())
    {
        if (m_tls) {
            const auto& pki = TestPki::get();
            m_context.use_certificate_chain_file(pki.cert(cert).string());
            m_context.use_private_key_file(pki.key(cert).string(), boost::asio::ssl::context::pem);
        }
        m_acceptor.open(boost::asio::ip::tcp::v4());
        m_acceptor.bind({boost::asio::ip::make_address("127.0.0.1"), 0});
        m_acceptor.listen();
        boost::asio::co_spawn(m_io, accept_loop(), boost::asio::detached);
        m_thread = std::thread([this] { m_io.run(); });
    }
    ~ScriptedModelServer()
    {
        m_io.stop();
        m_thread.join();
    }
    ScriptedModelServer(const ScriptedModelServer&) = delete;
    ScriptedModelServer& operator=(const ScriptedModelServer&) = delete;

    unsigned short port() const { return m_acceptor.local_endpoint().port(); }

    std::vector<RecordedRequest> requests() const
    {
        std::lock_guard lock(m_mutex);
        return m_requests;
    }
    int handshakes_failed() const
    {
        std::lock_guard lock(m_mutex);
        return m_handshakes_failed;
    }

private:
    boost::asio::awaitable<void> accept_loop()
    {
        for (;;) {
            auto [ec, socket] = co_await m_acceptor.async_accept(boost::asio::as_tuple(boost::asio::use_awaitable));
            if (ec) co_return;
            boost::asio::co_spawn(m_io, serve(std::move(socket)), boost::asio::detached);
        }
    }

    boost::asio::awaitable<void> serve(boost::asio::ip::tcp::socket socket)
    {
        namespace beast = boost::beast;
        constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
        if (!m_tls) {
            beast::tcp_stream stream(std::move(socket));
            co_await exchange(stream, stream, "");
            co_return;
        }
        beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), m_context);
        stream.next_layer().expires_after(std::chrono::seconds(10));
        auto [handshake_ec] = co_await stream.async_handshake(boost::asio::ssl::stream_base::server, tuple);
        if (handshake_ec) {
            std::lock_guard lock(m_mutex);
            ++m_handshakes_failed;
            co_return;
        }
        const char* name = SSL_get_servername(stream.native_handle(), TLSEXT_NAMETYPE_host_name);
        co_await exchange(stream, stream.next_layer(), name ? name : "");
    }

    // One request and its scripted answer.
    template <class Stream>
    boost::asio::awaitable<void> exchange(Stream& stream, boost::beast::tcp_stream& timed, std::string sni)
    {
        namespace beast = boost::beast;
        namespace http = beast::http;
        constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
        timed.expires_after(std::chrono::seconds(10));
        beast::flat_buffer buffer;
        http::request<http::string_body> request;
        auto [read_ec, read] = co_await http::async_read(stream, buffer, request, tuple);
        if (read_ec) co_return;
        RecordedRequest record;
        record.method = std::string(request.method_string());
        record.target = std::string(request.target());
        record.host = std::string(request[http::field::host]);
        record.authorization = std::string(request[http::field::authorization]);
        record.user_agent = std::string(request[http::field::user_agent]);
        record.accept = std::string(request[http::field::accept]);
        record.content_type = std::string(request[http::field::content_type]);
        record.body = request.body();
        record.sni = std::move(sni);
        record.arrived = std::chrono::steady_clock::now();
        ScriptedAnswer answer(500, R"({"error":{"message":"script used up"}})");
        {
            std::lock_guard lock(m_mutex);
            m_requests.push_back(std::move(record));
            if (!m_script.empty()) {
                answer = std::move(m_script.front());
                m_script.pop_front();
            }
        }
        if (answer.delay.count() > 0) {
            boost::asio::steady_timer timer(m_io, answer.delay);
            co_await timer.async_wait(tuple);
        }
        http::response<http::string_body> response{static_cast<http::status>(answer.status), 11};
        response.set(http::field::content_type, "application/json");
        for (const auto& [name, value] : answer.headers) response.set(name, value);
        response.body() = std::move(answer.body);
        response.prepare_payload();
        if (answer.chunked) response.chunked(true);
        timed.expires_after(std::chrono::seconds(10));
        co_await http::async_write(stream, response, tuple);
        beast::error_code ignored;
        timed.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    }

    boost::asio::ssl::context m_context;
    bool m_tls;
    mutable std::mutex m_mutex;
    std::deque<ScriptedAnswer> m_script;
    std::vector<RecordedRequest> m_requests;
    int m_handshakes_failed = 0;
    std::thread m_thread;
    // Last, so it is destroyed first: the connections still open end with it.
    boost::asio::io_context m_io;
    boost::asio::ip::tcp::acceptor m_acceptor{m_io};
};

}  // namespace pybox::test
