// The check of what an engine holds after a pull by digest.
#include "daemon/registry/image_pull.hpp"
#include "daemon/registry/registry_answers.hpp"

#include "common/api_error_codes.hpp"

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

using namespace pybox::registry;
namespace api_error = pybox::api_error;

namespace {

const std::string k_pulled_manifest = "sha256:" + std::string(64, 'a');
const std::string k_pulled_image = "sha256:" + std::string(64, 'c');

PinnedReference pulled_reference() { return parse_pinned_reference("127.0.0.1:5000/pybox/stdlib@" + k_pulled_manifest).value(); }

boost::json::value inspect_answer(const std::string& id, const std::string& repo_digests)
{
    return boost::json::parse(R"({"Id":")" + id + R"(","RepoTags":[],"RepoDigests":)" + repo_digests + "}");
}

}  // namespace

TEST_CASE("A pulled image whose RepoDigests hold the reference and whose ID is the recorded one passes")
{
    const auto pulled = check_pulled_image(
        inspect_answer(k_pulled_image, R"(["other/repo@sha256:)" + std::string(64, 'b') + R"(","127.0.0.1:5000/pybox/stdlib@)" + k_pulled_manifest + R"("])"),
        pulled_reference(), k_pulled_image);
    REQUIRE(pulled.has_value());
    CHECK(pulled->image_id == k_pulled_image);
    CHECK(pulled->reference == "127.0.0.1:5000/pybox/stdlib@" + k_pulled_manifest);
    CHECK(check_pulled_image(inspect_answer(k_pulled_image, R"(["127.0.0.1:5000/pybox/stdlib@)" + k_pulled_manifest + R"("])"), pulled_reference(),
                             std::nullopt)
              .has_value());
}

TEST_CASE("A pulled image under another digest or with another image ID is a digest mismatch")
{
    const auto other_digest = check_pulled_image(
        inspect_answer(k_pulled_image, R"(["127.0.0.1:5000/pybox/stdlib@sha256:)" + std::string(64, 'b') + R"("])"), pulled_reference(), k_pulled_image);
    REQUIRE_FALSE(other_digest.has_value());
    CHECK(other_digest.error().code == api_error::k_image_digest_mismatch);
    CHECK_THAT(other_digest.error().message, Catch::Contains("tampered or wrong digest"));
    const auto other_image = check_pulled_image(
        inspect_answer("sha256:" + std::string(64, 'd'), R"(["127.0.0.1:5000/pybox/stdlib@)" + k_pulled_manifest + R"("])"), pulled_reference(),
        k_pulled_image);
    REQUIRE_FALSE(other_image.has_value());
    CHECK(other_image.error().code == api_error::k_image_digest_mismatch);
    CHECK_THAT(other_image.error().message, Catch::Contains("the record says " + k_pulled_image));
}

TEST_CASE("An inspect answer without an image ID or RepoDigests is the engine's protocol error")
{
    CHECK(check_pulled_image(boost::json::parse(R"({"RepoDigests":[]})"), pulled_reference(), std::nullopt).error().code ==
          api_error::k_engine_protocol);
    CHECK(check_pulled_image(boost::json::parse(R"({"Id":")" + k_pulled_image + R"("})"), pulled_reference(), std::nullopt).error().code ==
          api_error::k_engine_protocol);
}

TEST_CASE("The seed's stdlib image is a pinned Docker Hub reference")
{
    const auto seed = parse_pinned_reference(k_seed_stdlib_image);
    REQUIRE(seed.has_value());
    CHECK_FALSE(seed->registry);
    CHECK(seed->repository == "python");
}
