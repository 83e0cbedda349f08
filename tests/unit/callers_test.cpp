// Who may use the socket: the pure admission decision of daemon/server/callers.hpp.
#include "daemon/server/callers.hpp"

#include <catch2/catch.hpp>

using namespace pybox::daemon;

namespace {

constexpr std::uint32_t k_group = 990;  // the pybox group
constexpr std::uint32_t k_user = 1001;

}  // namespace

TEST_CASE("A per-user pyboxd admits only its own user, as admin")
{
    const auto own = admit(ServeMode::owner, PeerFacts{k_user, k_user, {}, std::nullopt});
    REQUIRE(own.has_value());
    CHECK(*own == Caller{k_user, true});
    for (const std::uint32_t other : {0u, 1002u}) {
        const auto refused = admit(ServeMode::owner, PeerFacts{other, k_user, {k_group}, k_group});
        REQUIRE_FALSE(refused.has_value());
        CHECK(refused.error().code == "forbidden");
        CHECK_THAT(refused.error().message, Catch::Contains("Only the user who runs pyboxd"));
    }
}

TEST_CASE("A system pyboxd admits root as admin and members of the pybox group as themselves")
{
    const auto root = admit(ServeMode::system, PeerFacts{0, 0, {}, k_group});
    REQUIRE(root.has_value());
    CHECK(*root == Caller{0, true});
    const auto member = admit(ServeMode::system, PeerFacts{k_user, 0, {100, k_group}, k_group});
    REQUIRE(member.has_value());
    CHECK(*member == Caller{k_user, false});
    // A primary group counts as well as a supplementary one.
    const auto primary = admit(ServeMode::system, PeerFacts{k_user, 0, {k_group}, k_group});
    REQUIRE(primary.has_value());
    CHECK_FALSE(primary->admin);
}

TEST_CASE("A system pyboxd refuses a user outside the pybox group, and everyone but root when there is no group")
{
    const auto outsider = admit(ServeMode::system, PeerFacts{k_user, 0, {100, 27}, k_group});
    REQUIRE_FALSE(outsider.has_value());
    CHECK(outsider.error().code == "forbidden");
    CHECK_THAT(outsider.error().message, Catch::Contains("uid 1001") && Catch::Contains("adduser USER pybox"));
    const auto no_group = admit(ServeMode::system, PeerFacts{k_user, 0, {k_group}, std::nullopt});
    REQUIRE_FALSE(no_group.has_value());
    CHECK_THAT(no_group.error().message, Catch::Contains("addgroup --system pybox"));
    const auto unknown_user = admit(ServeMode::system, PeerFacts{k_user, 0, {}, k_group});
    CHECK_FALSE(unknown_user.has_value());
}
