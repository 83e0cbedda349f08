// The readers of a registry's answers and of an engine's pull progress, and the registry
// client's refusal of a registry it would reach over plain HTTP on the network.
#include "daemon/registry/registry_answers.hpp"
#include "daemon/registry/registry_client.hpp"

#include "common/api_error_codes.hpp"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

using namespace pybox::registry;
namespace api_error = pybox::api_error;

namespace {
const std::string k_blob_digest = "sha256:" + std::string(64, 'e');
}

TEST_CASE("The registry's error body is shown as its codes and messages, and anything else as nothing")
{
    CHECK(describe_registry_errors(
              R"({"errors":[{"code":"DIGEST_INVALID","message":"provided digest did not match uploaded content","detail":{}}]})") ==
          "DIGEST_INVALID: provided digest did not match uploaded content");
    CHECK(describe_registry_errors(R"({"errors":[{"code":"A"},{"code":"B","message":"m\u0007"}]})") == "A; B: m\\x07");
    CHECK(describe_registry_errors("404 page not found") == "");
    CHECK(describe_registry_errors(R"({"errors":[{"message":"no code"}]})") == "");
    CHECK(describe_registry_errors(R"({"errors":[{"code":"A"}],"errors":[]})") == "");
}

TEST_CASE("An upload's Location is taken as a path on the same registry only")
{
    CHECK(upload_target("/v2/pybox/stdlib/blobs/uploads/u1?_state=x", "127.0.0.1:5000").value() ==
          "/v2/pybox/stdlib/blobs/uploads/u1?_state=x");
    CHECK(upload_target("http://127.0.0.1:5000/v2/pybox/stdlib/blobs/uploads/u1?_state=x", "127.0.0.1:5000").value() ==
          "/v2/pybox/stdlib/blobs/uploads/u1?_state=x");
    for (const char* location : {"http://10.0.0.1:5000/v2/x", "https://127.0.0.1:5000/v2/x", "/other", "", "/v2/x y",
                                 "/v2/x\r\nHost: evil", "//evil/v2/x", "http://127.0.0.1:50000/v2/x", "/v2/x#frag"}) {
        INFO(location);
        const auto target = upload_target(location, "127.0.0.1:5000");
        REQUIRE_FALSE(target.has_value());
        CHECK(target.error().code == api_error::k_registry_protocol);
    }
    CHECK(with_digest_query("/v2/a/blobs/uploads/u?_state=x", k_blob_digest) == "/v2/a/blobs/uploads/u?_state=x&digest=" + k_blob_digest);
    CHECK(with_digest_query("/v2/a/blobs/uploads/u", k_blob_digest) == "/v2/a/blobs/uploads/u?digest=" + k_blob_digest);
}

TEST_CASE("A pull's progress names its digest, or its first error")
{
    const auto pulled = read_pull_progress(
        "{\"status\":\"Pulling from pybox/stdlib\",\"id\":\"sha256:x\"}\r\n"
        "{\"status\":\"Pull complete\",\"progressDetail\":{},\"id\":\"0170cb8ce381\"}\r\n"
        "{\"status\":\"Digest: " + k_blob_digest + "\"}\r\n{\"status\":\"Status: Downloaded newer image\"}\r\n");
    REQUIRE(pulled.has_value());
    CHECK(pulled->digest == k_blob_digest);
    CHECK_FALSE(pulled->error);
    const auto failed = read_pull_progress(
        "{\"status\":\"Pulling fs layer\"}\n"
        "{\"errorDetail\":{\"message\":\"filesystem layer verification failed\"},\"error\":\"filesystem layer verification failed\"}\n"
        "{\"error\":\"second\"}\n");
    REQUIRE(failed.has_value());
    CHECK(failed->error == "filesystem layer verification failed");
}

TEST_CASE("A pull's progress with a line that is not a JSON object, or a malformed digest, is refused")
{
    CHECK(read_pull_progress("{\"status\":\"a\"}\nnot json\n").error().code == api_error::k_engine_protocol);
    CHECK(read_pull_progress("[1]\n").error().code == api_error::k_engine_protocol);
    CHECK(read_pull_progress("{\"status\":\"Digest: sha256:abc\"}\n").error().code == api_error::k_engine_protocol);
    CHECK(read_pull_progress("").value().digest == std::nullopt);
}

TEST_CASE("The registry client refuses a registry that is not on a loopback IP address")
{
    boost::asio::io_context io;
    for (const char* host : {"10.0.0.1", "registry.example.org", "localhost", "192.168.1.2"}) {
        INFO(host);
        const auto client = RegistryClient::make(io.get_executor(), RegistryHost{host, 5000});
        REQUIRE_FALSE(client.has_value());
        CHECK(client.error().code == api_error::k_registry_not_loopback);
        CHECK(client.error().message.find("HTTPS registries are not supported") != std::string::npos);
    }
    CHECK(RegistryClient::make(io.get_executor(), RegistryHost{"127.0.0.1", 5000}).has_value());
    CHECK(RegistryClient::make(io.get_executor(), RegistryHost{"::1", 5000}).has_value());
}
