// util/described_json.hpp: a described struct is written member by member in declaration order,
// and read back with the reader's strict and tolerant rules, its member rules and its check.
#include "util/described_json.hpp"
#include "util/json_writer.hpp"

#include <boost/describe/class.hpp>
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include <string>

namespace pybox::described_json_test {

struct Leaf {
    std::string name;
    std::optional<bool> seen;
    friend bool operator==(const Leaf&, const Leaf&) = default;
};
BOOST_DESCRIBE_STRUCT(Leaf, (), (name, seen))

struct Tree {
    int count = 0;
    std::uint32_t uid = 0;
    bool is_default = false;             // written as "default"
    std::vector<Leaf> leaves;            // written only when there are leaves
    std::optional<std::string> comment;  // always written, null when empty
    bool added = false;                  // written by newer writers only
    Leaf root;
    friend bool operator==(const Tree&, const Tree&) = default;
};
BOOST_DESCRIBE_STRUCT(Tree, (), (count, uid, is_default, leaves, comment, added, root))

struct Grown : Tree {
    double size = 0;
    friend bool operator==(const Grown&, const Grown&) = default;
};
BOOST_DESCRIBE_STRUCT(Grown, (Tree), (size))

constexpr util::JsonMemberRule k_tree_rules[] = {
    {"is_default", "default"},
    {"leaves", {}, util::JsonPresence::when_set},
    {"added", {}, util::JsonPresence::since_added},
};
std::span<const util::JsonMemberRule> json_member_rules(const Tree*) { return k_tree_rules; }

void check_json(util::ObjectReader& reader, const Leaf& leaf)
{
    if (leaf.name.empty()) reader.fail("name", "is empty");
}

template <class T>
std::pair<T, std::string> read(std::string_view text, util::ReadMode mode)
{
    std::string error;
    const auto document = boost::json::parse(text);
    util::ObjectReader reader(document, "", error, mode);
    T value = util::read_described<T>(reader);
    reader.finish();
    return {value, error};
}

Grown sample()
{
    Grown grown;
    grown.count = -3;
    grown.uid = 4000000000U;
    grown.is_default = true;
    grown.leaves = {{"a", true}, {"b", std::nullopt}};
    grown.added = true;
    grown.root = {"r", false};
    grown.size = 2.5;
    return grown;
}

using util::ReadMode;

TEST_CASE("A described struct is written in declaration order, inherited members first, under its renamed keys")
{
    CHECK(util::to_json_text(util::described_to_json(sample())) ==
          R"({"count":-3,"uid":4000000000,"default":true,"leaves":[{"name":"a","seen":true},{"name":"b","seen":null}],)"
          R"("comment":null,"added":true,"root":{"name":"r","seen":false},"size":2.5})");
    Grown bare;
    bare.root.name = "r";
    CHECK(util::to_json_text(util::described_to_json(bare)).find("leaves") == std::string::npos);
}

TEST_CASE("What is written reads back strictly as the same struct; a left-out member reads as empty")
{
    for (const auto& grown : {sample(), Grown{{0, 0, false, {}, std::string("c"), false, {"r", {}}}, 0}}) {
        const auto [read_back, error] =
            read<Grown>(util::to_json_text(util::described_to_json(grown)), ReadMode::strict);
        CHECK(error.empty());
        CHECK(read_back == grown);
    }
}

TEST_CASE("A member added later is refused when absent strictly and read as its default tolerantly")
{
    const std::string_view older = R"({"count":1,"uid":2,"default":false,"comment":null,"root":{"name":"r","seen":null}})";
    CHECK(read<Tree>(older, ReadMode::strict).second == "added is missing");
    const auto [tree, error] = read<Tree>(older, ReadMode::tolerant);
    CHECK(error.empty());
    CHECK_FALSE(tree.added);
}

TEST_CASE("Wrong types, out-of-range numbers, unknown keys and a failed check are refused with their path")
{
    const auto with = [](std::string_view leaves, std::string_view uid = "2") {
        return R"({"count":1,"uid":)" + std::string(uid) + R"(,"default":false,"leaves":)" + std::string(leaves) +
               R"(,"comment":null,"added":true,"root":{"name":"r","seen":null}})";
    };
    CHECK(read<Tree>(with(R"([{"name":"a","seen":1}])"), ReadMode::tolerant).second ==
          "leaves[0].seen must be true, false or null");
    CHECK(read<Tree>(with(R"([{"name":"","seen":null}])"), ReadMode::tolerant).second == "leaves[0].name is empty");
    CHECK(read<Tree>(with(R"([{"name":"a","seen":null,"more":1}])"), ReadMode::strict).second ==
          "leaves[0].more is not a known field");
    CHECK(read<Tree>(with(R"([{"name":"a","seen":null,"more":1}])"), ReadMode::tolerant).second.empty());
    CHECK_FALSE(read<Tree>(with("[]", "-1"), ReadMode::tolerant).second.empty());
    CHECK_FALSE(read<Tree>(with("[]", "4294967296"), ReadMode::tolerant).second.empty());
}

}  // namespace pybox::described_json_test
