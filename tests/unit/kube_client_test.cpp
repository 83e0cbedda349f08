// The apiserver client against a scripted HTTPS server on 127.0.0.1 with a CA the test makes
// (tests/support/scripted_model_server.hpp): the request's shape, certificates checked against
// the kubeconfig's CA and the host, Status errors, an address where nothing listens, and
// credentials that cannot be loaded.
#include "common/limits.hpp"
#include "common/version.hpp"
#include "daemon/kube/kube_client.hpp"
#include "tests/support/kube_test_access.hpp"
#include "tests/support/scripted_model_server.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

using namespace pybox;
using namespace pybox::kube;
using namespace std::chrono_literals;
using test::access_to;
using test::pem_text;
using test::run_kube;
using test::ScriptedAnswer;
using test::ScriptedModelServer;
using test::TestPki;

TEST_CASE("A call goes over TLS verified against the kubeconfig's CA, with the token, pybox's agent and no pretty JSON")
{
    ScriptedModelServer server("localhost", {{200, R"({"major":"1","minor":"20"})"}});
    auto client = KubeClient::make(access_to(server.port()));
    REQUIRE(client.has_value());
    auto answer = run_kube((*client)->call_json(http::verb::get, "/version", nullptr, 5s));
    REQUIRE(answer.has_value());
    CHECK(answer->at("minor") == "20");
    const auto requests = server.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].method == "GET");
    CHECK(requests[0].target == "/version");
    CHECK(requests[0].host == "127.0.0.1:" + std::to_string(server.port()));
    CHECK(requests[0].authorization == "Bearer t0k3n");
    CHECK(requests[0].user_agent == "pybox/" + std::string(pybox::version_number()));
    CHECK(requests[0].accept == "application/json");
    CHECK(requests[0].sni.empty());  // an IP address is not sent as SNI
}

TEST_CASE("A call puts the server's base path before the API path and sends a body as JSON")
{
    ScriptedModelServer server("localhost", {{201, R"({"kind":"Pod"})"}});
    auto access = access_to(server.port(), "localhost");
    access.server.base_path = "/k8s/clusters/c-1";
    auto client = KubeClient::make(access);
    REQUIRE(client.has_value());
    const json::value pod = json::object{{"kind", "Pod"}};
    auto answer = run_kube((*client)->call(http::verb::post, "/api/v1/namespaces/ns/pods", &pod, 5s));
    REQUIRE(answer.has_value());
    CHECK(answer->status == 201);
    CHECK(answer->what == "POST /api/v1/namespaces/ns/pods");
    const auto requests = server.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].target == "/k8s/clusters/c-1/api/v1/namespaces/ns/pods");
    CHECK(requests[0].body == R"({"kind":"Pod"})");
    CHECK(requests[0].content_type == "application/json");
    CHECK(requests[0].sni == "localhost");
}

TEST_CASE("An apiserver certificate from another CA is refused as kube_tls")
{
    ScriptedModelServer server("stranger", {});
    auto client = KubeClient::make(access_to(server.port()));
    REQUIRE(client.has_value());
    auto answer = run_kube((*client)->call(http::verb::get, "/version", nullptr, 5s));
    REQUIRE_FALSE(answer.has_value());
    CHECK(answer.error().code == "kube_tls");
    CHECK_THAT(answer.error().message, Catch::Contains("does not verify against the CA of cluster \"test\""));
    CHECK(server.requests().empty());
}

TEST_CASE("An apiserver certificate for another host is refused as kube_tls")
{
    ScriptedModelServer server("wrong-name", {});
    auto client = KubeClient::make(access_to(server.port()));
    REQUIRE(client.has_value());
    auto answer = run_kube((*client)->call(http::verb::get, "/version", nullptr, 5s));
    REQUIRE_FALSE(answer.has_value());
    CHECK(answer.error().code == "kube_tls");
    CHECK_THAT(answer.error().message, Catch::Contains("is not for the host 127.0.0.1"));
    CHECK(server.requests().empty());
}

TEST_CASE("A Status answer becomes a precise error of call_json, and is a value of call")
{
    const std::string forbidden =
        R"({"kind":"Status","status":"Failure","message":"pods is forbidden: User \"u\" cannot list resource \"pods\"","reason":"Forbidden","code":403})";
    ScriptedModelServer server("localhost", {{403, forbidden}, {403, forbidden}});
    auto client = KubeClient::make(access_to(server.port()));
    REQUIRE(client.has_value());
    auto failed = run_kube((*client)->call_json(http::verb::get, "/api/v1/namespaces/ns/pods?limit=1", nullptr, 5s));
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().code == "engine_error");
    CHECK(failed.error().message == "GET /api/v1/namespaces/ns/pods: the apiserver answered 403 Forbidden (Forbidden): pods is "
                                    "forbidden: User \"u\" cannot list resource \"pods\".");
    auto reply = run_kube((*client)->call(http::verb::get, "/api/v1/namespaces/ns/pods", nullptr, 5s));
    REQUIRE(reply.has_value());
    CHECK(reply->status == 403);
    CHECK(reply->body == forbidden);
}

TEST_CASE("A 2xx answer that is not a JSON object, or over the cap, is engine_protocol")
{
    ScriptedModelServer server("localhost", {{200, "[]"}, {200, std::string(limits::k_max_engine_response_bytes + 1, ' ')}});
    auto client = KubeClient::make(access_to(server.port()));
    REQUIRE(client.has_value());
    auto array = run_kube((*client)->call_json(http::verb::get, "/version", nullptr, 5s));
    REQUIRE_FALSE(array.has_value());
    CHECK(array.error().code == "engine_protocol");
    auto big = run_kube((*client)->call(http::verb::get, "/version", nullptr, 5s));
    REQUIRE_FALSE(big.has_value());
    CHECK(big.error().code == "engine_protocol");
    CHECK_THAT(big.error().message, Catch::Contains("larger than"));
}

TEST_CASE("An apiserver that does not answer in time is engine_timeout; one where nothing listens is engine_unreachable")
{
    ScriptedModelServer slow("localhost", {{200, "{}", {}, 3s}});
    auto client = KubeClient::make(access_to(slow.port()));
    REQUIRE(client.has_value());
    auto late = run_kube((*client)->call(http::verb::get, "/version", nullptr, 300ms));
    REQUIRE_FALSE(late.has_value());
    CHECK(late.error().code == "engine_timeout");

    unsigned short closed_port = 0;
    {
        ScriptedModelServer gone("localhost", {});
        closed_port = gone.port();
    }
    auto nobody = KubeClient::make(access_to(closed_port));
    REQUIRE(nobody.has_value());
    auto refused = run_kube((*nobody)->call(http::verb::get, "/version", nullptr, 2s));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == "engine_unreachable");
    CHECK_THAT(refused.error().message, Catch::Contains("https://127.0.0.1:" + std::to_string(closed_port)));
}

TEST_CASE("A CA, client certificate or key that cannot be loaded, or the key of another certificate, is kubeconfig_invalid")
{
    const auto& pki = TestPki::get();
    auto bad_ca = access_to(1);
    bad_ca.ca_pem = "not a certificate";
    CHECK_THAT(KubeClient::make(bad_ca).error().message, Catch::Contains("The CA of cluster \"test\""));
    auto cert_user = access_to(1);
    cert_user.token.clear();
    cert_user.client_cert_pem = pem_text(pki.cert("localhost"));
    cert_user.client_key_pem = pem_text(pki.key("localhost"));
    CHECK(KubeClient::make(cert_user).has_value());
    auto other_key = cert_user;
    other_key.client_key_pem = pem_text(pki.key("stranger"));
    auto mismatch = KubeClient::make(other_key);
    REQUIRE_FALSE(mismatch.has_value());
    CHECK(mismatch.error().code == "kubeconfig_invalid");
    CHECK_THAT(mismatch.error().message, Catch::Contains("cannot be used with its certificate: key values mismatch"));
    auto bad_cert = cert_user;
    bad_cert.client_cert_pem = "junk";
    CHECK_THAT(KubeClient::make(bad_cert).error().message, Catch::Contains("client certificate of user \"u\""));
}

namespace {

// Every line of a streaming GET's answer, or its first Error.
Expected<std::vector<std::string>> all_lines(KubeClient& client, std::size_t max_line_bytes)
{
    return run_kube([&]() -> boost::asio::awaitable<Expected<std::vector<std::string>>> {
        auto opened = co_await client.get_lines("/api/v1/namespaces/ns/pods?watch=1", 5s,
                                                std::chrono::steady_clock::now() + 5s, max_line_bytes);
        if (!opened) co_return opened.error();
        auto* lines = std::get_if<std::unique_ptr<KubeLineStream>>(&*opened);
        REQUIRE(lines != nullptr);
        std::vector<std::string> read;
        for (;;) {
            auto line = co_await (*lines)->next_line();
            if (!line) co_return line.error();
            if (!*line) co_return read;
            read.push_back(std::move(**line));
        }
    }());
}

}  // namespace

TEST_CASE("A streaming GET gives a chunked 2xx answer's body line by line, then its end", "[kube_watch]")
{
    ScriptedAnswer answer(200, "{\"type\":\"ADDED\"}\n{\"type\":\"MODIFIED\"}\n");
    answer.chunked = true;
    ScriptedModelServer server("localhost", {answer});
    auto client = KubeClient::make(access_to(server.port()));
    REQUIRE(client.has_value());
    const auto lines = all_lines(**client, 64);
    REQUIRE(lines.has_value());
    CHECK(*lines == std::vector<std::string>{R"({"type":"ADDED"})", R"({"type":"MODIFIED"})"});
    const auto requests = server.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].target == "/api/v1/namespaces/ns/pods?watch=1");
    CHECK(requests[0].authorization == "Bearer t0k3n");
}

TEST_CASE("A streamed line longer than the bound, or an answer that ends inside a line, is engine_protocol",
          "[kube_watch]")
{
    ScriptedAnswer long_line(200, std::string(65, 'x') + "\n");
    ScriptedAnswer unended(200, "{\"type\":\"ADDED\"}");
    long_line.chunked = unended.chunked = true;
    ScriptedModelServer server("localhost", {long_line, unended});
    auto client = KubeClient::make(access_to(server.port()));
    REQUIRE(client.has_value());
    const auto too_long = all_lines(**client, 64);
    REQUIRE_FALSE(too_long.has_value());
    CHECK(too_long.error().code == "engine_protocol");
    CHECK_THAT(too_long.error().message, Catch::Contains("longer than 64 bytes"));
    const auto cut = all_lines(**client, 64);
    REQUIRE_FALSE(cut.has_value());
    CHECK(cut.error().code == "engine_protocol");
    CHECK_THAT(cut.error().message, Catch::Contains("ended inside a line"));
}

TEST_CASE("A streaming GET answered with another status gives that answer whole", "[kube_watch]")
{
    ScriptedModelServer server("localhost", {{403, R"({"kind":"Status","code":403,"reason":"Forbidden"})"}});
    auto client = KubeClient::make(access_to(server.port()));
    REQUIRE(client.has_value());
    auto opened = run_kube((*client)->get_lines("/api/v1/namespaces/ns/pods?watch=1", 5s,
                                                std::chrono::steady_clock::now() + 5s, 64));
    REQUIRE(opened.has_value());
    const auto* reply = std::get_if<KubeReply>(&*opened);
    REQUIRE(reply != nullptr);
    CHECK(reply->status == 403);
    CHECK(reply->what == "GET /api/v1/namespaces/ns/pods");
    CHECK_THAT(reply->body, Catch::Contains("Forbidden"));
}
