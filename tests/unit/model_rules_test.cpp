// The model client's pure rules: which base URLs are accepted and where they lead, when a call
// is tried again and after how long.
#include "daemon/model/model_limits.hpp"
#include "daemon/model/model_retry.hpp"
#include "daemon/model/model_url.hpp"

#include <catch2/catch.hpp>

#include <chrono>

using namespace pybox::model;
using namespace std::chrono_literals;

namespace {

ModelEndpoint endpoint(std::string_view url)
{
    auto parsed = parse_base_url(url);
    INFO(url);
    REQUIRE(parsed.has_value());
    return *parsed;
}

std::string refusal(std::string_view url)
{
    auto parsed = parse_base_url(url);
    INFO(url);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == "config_invalid");
    return parsed.error().message;
}

}  // namespace

TEST_CASE("The hosted NIM base URL leads to /v1/chat/completions on port 443 over TLS")
{
    const auto nim = endpoint(k_default_base_url);
    CHECK(nim.tls);
    CHECK(nim.host == "integrate.api.nvidia.com");
    CHECK(nim.port == 443);
    CHECK(nim.target == "/v1/chat/completions");
    CHECK(nim.describe() == "https://integrate.api.nvidia.com:443/v1/chat/completions");
}

TEST_CASE("A base URL that already ends in /v1 does not get a second /v1")
{
    CHECK(endpoint("http://localhost:8000/v1").target == "/v1/chat/completions");
    CHECK(endpoint("http://localhost:8000/v1/").target == "/v1/chat/completions");
    CHECK(endpoint("http://localhost:8000").target == "/v1/chat/completions");
    CHECK(endpoint("https://models.example.org/nim").target == "/nim/v1/chat/completions");
    CHECK(endpoint("https://models.example.org/nim/v1").target == "/nim/v1/chat/completions");
    CHECK(endpoint("https://integrate.api.nvidia.com/v1").target == "/v1/chat/completions");
}

TEST_CASE("A base URL's port, IPv6 host and default ports are read")
{
    const auto local = endpoint("http://localhost:8000/v1");
    CHECK_FALSE(local.tls);
    CHECK(local.port == 8000);
    CHECK(endpoint("http://127.0.0.1").port == 80);
    const auto six = endpoint("https://[::1]:8443");
    CHECK(six.host == "::1");
    CHECK(six.port == 8443);
    CHECK(six.describe() == "https://[::1]:8443/v1/chat/completions");
    CHECK(endpoint("https://10.0.0.5:8000/v1").host == "10.0.0.5");
}

TEST_CASE("Plain http is refused for any host that is not a loopback one")
{
    CHECK(refusal("http://gpu-box.lan:8000/v1").find("only for a service on this machine") != std::string::npos);
    refusal("http://10.0.0.5:8000");
    refusal("http://[2001:db8::1]:8000");
    endpoint("http://127.0.0.2:8000");
    endpoint("http://[::1]:8000");
}

TEST_CASE("A base URL with user info, a query, a fragment, escapes or a bad port is refused")
{
    CHECK(refusal("https://user:secret@integrate.api.nvidia.com").find("user information") != std::string::npos);
    refusal("https://integrate.api.nvidia.com/v1?key=x");
    refusal("https://integrate.api.nvidia.com/v1#x");
    refusal("https://integrate.api.nvidia.com/v%31");
    refusal("https://integrate.api.nvidia.com:0");
    refusal("https://integrate.api.nvidia.com:65536");
    refusal("https://integrate.api.nvidia.com:");
    refusal("https://integrate.api.nvidia.com:80x");
    refusal("https://");
    refusal("https://[::1");
    refusal("https://[zz]:1");
    refusal("https://host/../v1");
    refusal("https://host//v1");
    refusal("ftp://host");
    refusal("integrate.api.nvidia.com");
    refusal("HTTPS://host");
    refusal("https://" + std::string(k_max_base_url_bytes, 'a'));
}

TEST_CASE("Retry-After is read as seconds or as an HTTP date from now")
{
    const auto now = std::chrono::system_clock::from_time_t(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT
    CHECK(parse_retry_after("120", now) == 120s);
    CHECK(parse_retry_after(" 0 ", now) == 0s);
    CHECK(parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now) == 10s);
    CHECK(parse_retry_after("Sun, 06 Nov 1994 08:49:30 GMT", now) == 0s);
    CHECK(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now + 500ms) == 0s);
    CHECK(parse_retry_after("Sun, 06 Nov 1994 08:49:38 GMT", now + 500ms) == 1s);
}

TEST_CASE("A Retry-After that is neither seconds nor an IMF date is not used")
{
    const auto now = std::chrono::system_clock::now();
    for (const auto* bad : {"", "-1", "1.5", "1e3", "soon", "1234567890", "Sunday, 06-Nov-94 08:49:37 GMT",
                            "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC", "Xyz, 06 Nov 1994 08:49:37 GMT",
                            "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT"})
        CHECK_FALSE(parse_retry_after(bad, now).has_value());
}

TEST_CASE("The backoff starts at 1 s and doubles to at most 8 s")
{
    CHECK(backoff_delay(1) == k_backoff_first);
    CHECK(backoff_delay(1) == 1s);
    CHECK(backoff_delay(2) == 2s);
    CHECK(backoff_delay(3) == 4s);
    CHECK(backoff_delay(4) == 8s);
    CHECK(backoff_delay(40) == k_backoff_longest);
}

TEST_CASE("Only 429 and 5xx answers are tried again, at most four tries in all")
{
    CHECK(plan_retry(429, 1, std::nullopt).again);
    CHECK(plan_retry(500, 1, std::nullopt).wait == 1s);
    CHECK(plan_retry(503, 2, std::nullopt).wait == 2s);
    CHECK(plan_retry(502, 3, std::nullopt).again);
    const auto last = plan_retry(503, k_max_tries, std::nullopt);
    CHECK_FALSE(last.again);
    CHECK(last.why_not == "tried 4 times");
    for (unsigned status : {400u, 401u, 403u, 404u, 301u, 422u})
        CHECK_FALSE(plan_retry(status, 1, std::nullopt).again);
}

TEST_CASE("A retry waits the Retry-After asked for, and a longer one than 30 s ends the call")
{
    CHECK(plan_retry(429, 1, 3s).wait == 3s);
    CHECK(plan_retry(429, 1, 0s).wait == 0s);
    CHECK(plan_retry(429, 1, k_max_retry_after).again);
    const auto too_long = plan_retry(429, 1, 31s);
    CHECK_FALSE(too_long.again);
    CHECK(too_long.why_not.find("31 s (Retry-After)") != std::string::npos);
}
