// Registry references: the grammar of a pinned image reference and of a cluster entry's registry.
#include "daemon/registry/pinned_reference.hpp"

#include "common/api_error_codes.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace pybox::registry;

namespace {

const std::string k_seed_hex = "70729b46c69b4f1e97c4822c1af3df53a1476cf5ddc6c087c0c10bc3a5678c2f";
const std::string k_seed_digest = "sha256:" + k_seed_hex;

void refused_reference(const std::string& text)
{
    INFO(text);
    const auto parsed = parse_pinned_reference(text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == pybox::api_error::k_image_reference_invalid);
}

}  // namespace

TEST_CASE("A pinned reference with a registry host and port is read into host, port, repository and digest")
{
    const auto parsed = parse_pinned_reference("127.0.0.1:5000/pybox/stdlib@" + k_seed_digest);
    REQUIRE(parsed.has_value());
    REQUIRE(parsed->registry);
    CHECK(parsed->registry->host == "127.0.0.1");
    CHECK(parsed->registry->port == 5000);
    CHECK(parsed->repository == "pybox/stdlib");
    CHECK(parsed->digest == k_seed_digest);
    CHECK(parsed->text() == "127.0.0.1:5000/pybox/stdlib@" + k_seed_digest);
}

TEST_CASE("A short reference is Docker Hub's and reads back as the engine writes it in RepoDigests")
{
    const auto parsed = parse_pinned_reference("python@" + k_seed_digest);
    REQUIRE(parsed.has_value());
    CHECK_FALSE(parsed->registry);
    CHECK(parsed->repository == "python");
    CHECK(parsed->text() == "python@" + k_seed_digest);
    const auto library = parse_pinned_reference("library/python@" + k_seed_digest);
    REQUIRE(library.has_value());
    CHECK_FALSE(library->registry);
    CHECK(library->repository == "library/python");
}

TEST_CASE("An IPv6 registry host is written in brackets and a DNS host needs a dot, a port or localhost")
{
    const auto v6 = parse_pinned_reference("[::1]:5000/pybox/stdlib@" + k_seed_digest);
    REQUIRE(v6.has_value());
    CHECK(v6->registry->host == "::1");
    CHECK(v6->text() == "[::1]:5000/pybox/stdlib@" + k_seed_digest);
    const auto named = parse_pinned_reference("registry.example.org/a/b@" + k_seed_digest);
    REQUIRE(named.has_value());
    CHECK(named->registry->host == "registry.example.org");
    CHECK_FALSE(named->registry->port);
    const auto local = parse_pinned_reference("localhost/a@" + k_seed_digest);
    REQUIRE(local.has_value());
    CHECK(local->registry->host == "localhost");
}

TEST_CASE("A reference without a digest, with a tag, or with a malformed part is refused")
{
    refused_reference("127.0.0.1:5000/pybox/stdlib");
    refused_reference("127.0.0.1:5000/pybox/stdlib:latest");
    refused_reference("127.0.0.1:5000/pybox/stdlib:latest@" + k_seed_digest);
    refused_reference("127.0.0.1:5000/pybox/stdlib@sha256:" + k_seed_hex.substr(1));
    refused_reference("127.0.0.1:5000/pybox/stdlib@sha256:" + std::string(64, 'A'));
    refused_reference("127.0.0.1:5000/pybox/stdlib@sha512:" + k_seed_hex);
    refused_reference("127.0.0.1:0/pybox/stdlib@" + k_seed_digest);
    refused_reference("127.0.0.1:65536/pybox/stdlib@" + k_seed_digest);
    refused_reference("127.0.0.1:05000/pybox/stdlib@" + k_seed_digest);
    refused_reference("127.0.0.1:/pybox/stdlib@" + k_seed_digest);
    refused_reference("[::1/pybox/stdlib@" + k_seed_digest);
    refused_reference("[127.0.0.1]:5000/pybox/stdlib@" + k_seed_digest);
    refused_reference("127.0.0.1:5000/Pybox/stdlib@" + k_seed_digest);
    refused_reference("127.0.0.1:5000/pybox//stdlib@" + k_seed_digest);
    refused_reference("127.0.0.1:5000/pybox/stdlib-@" + k_seed_digest);
    refused_reference("127.0.0.1:5000/pybox/../stdlib@" + k_seed_digest);
    refused_reference("127.0.0.1:5000/@" + k_seed_digest);
    refused_reference("bad_host.example/a@" + k_seed_digest);
    refused_reference("a/b/c/d/e/f/g/h/i@" + k_seed_digest);
    refused_reference("@" + k_seed_digest);
    refused_reference(std::string(600, 'a') + "@" + k_seed_digest);
}

TEST_CASE("A registry address is HOST[:PORT]/PREFIX and names a reference inside it")
{
    const auto address = parse_registry_address("127.0.0.1:5000/pybox");
    REQUIRE(address.has_value());
    CHECK(address->host.authority() == "127.0.0.1:5000");
    CHECK(address->prefix == "pybox");
    const auto reference = reference_in(*address, "stdlib", k_seed_digest);
    REQUIRE(reference.has_value());
    CHECK(reference->text() == "127.0.0.1:5000/pybox/stdlib@" + k_seed_digest);
    CHECK_FALSE(reference_in(*address, "Std lib", k_seed_digest).has_value());
    CHECK_FALSE(parse_registry_address("127.0.0.1:5000").has_value());
    CHECK_FALSE(parse_registry_address("127.0.0.1:5000/").has_value());
    CHECK_FALSE(parse_registry_address("http://127.0.0.1:5000/pybox").has_value());
}

TEST_CASE("A sha256 digest is the prefix and exactly 64 lower-case hex digits")
{
    CHECK(is_sha256_digest(k_seed_digest));
    CHECK_FALSE(is_sha256_digest(k_seed_hex));
    CHECK_FALSE(is_sha256_digest(k_seed_digest + "0"));
    CHECK_FALSE(is_sha256_digest("sha256:" + std::string(64, 'g')));
}
