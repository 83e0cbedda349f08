// A struct described with BOOST_DESCRIBE_STRUCT, written as a JSON object and read back through
// an ObjectReader, so one description replaces a hand-written writer and reader pair and keeps
// the reader's strict and tolerant rules and its messages ("images[0].status is not a known value").
//
// Each public member (inherited ones first) is one key, in declaration order. Member types:
// std::string, bool, int, std::int64_t, std::uint32_t, std::uint64_t, double; std::optional of
// one of those (written as null when empty, read as null or the value); std::vector<std::string>;
// a described struct (a nested object) and a std::vector of one (an array of objects, each read
// with its own path, "key[i]").
//
// Two customisation points, found by argument-dependent lookup beside the type:
//  - `json_member_rules(const T*)` returns the members whose key or presence differs from the
//    default (JsonMemberRule); a derived struct finds its base's rules through the pointer.
//  - `check_json(ObjectReader&, const T&)` is called after T's members were read, for rules
//    between members or on their values (an enum kept as text); it reports with reader.fail().
// Pure.
#pragma once

#include "util/json_reader.hpp"

#include <boost/describe/members.hpp>
#include <boost/describe/modifiers.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/mp11/algorithm.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace pybox::util {

enum class JsonPresence {
    always,    // written every time; a missing key is refused
    when_set,  // written only when the optional is set or the vector is not empty; absent reads as empty
    // Written every time, but writers older than the member did not: strict readers refuse its
    // absence, tolerant ones read it as the member's default.
    since_added,
};

struct JsonMemberRule {
    std::string_view member;
    std::string_view key{};  // empty: the member's own name
    JsonPresence presence = JsonPresence::always;
};

namespace described_json_detail {

template <class T>
constexpr bool is_described = boost::describe::has_describe_members<T>::value;

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
std::span<const JsonMemberRule> rules_of()
{
    if constexpr (requires { json_member_rules(static_cast<const T*>(nullptr)); })
        return json_member_rules(static_cast<const T*>(nullptr));
    else
        return {};
}

inline JsonMemberRule rule_for(std::span<const JsonMemberRule> rules, std::string_view member)
{
    for (const auto& rule : rules)
        if (rule.member == member) return {member, rule.key.empty() ? member : rule.key, rule.presence};
    return {member, member, JsonPresence::always};
}

template <class T>
bool is_empty(const T& value)
{
    if constexpr (is_optional<T>::value)
        return !value.has_value();
    else if constexpr (is_vector<T>::value)
        return value.empty();
    else
        static_assert(is_optional<T>::value || is_vector<T>::value, "only optionals and vectors can be left out");
}

}  // namespace described_json_detail

template <class T>
    requires described_json_detail::is_described<T>
boost::json::object described_to_json(const T& value);

template <class T>
    requires described_json_detail::is_described<T>
T read_described(ObjectReader& reader);

namespace described_json_detail {

template <class T>
boost::json::value member_to_json(const T& value)
{
    if constexpr (is_described<T>)
        return described_to_json(value);
    else if constexpr (is_optional<T>::value)
        return value ? member_to_json(*value) : boost::json::value(nullptr);
    else if constexpr (is_vector<T>::value) {
        boost::json::array array;
        for (const auto& item : value) array.push_back(member_to_json(item));
        return array;
    } else
        return boost::json::value(value);
}

template <class T>
void read_member(ObjectReader& reader, std::string_view key, T& out)
{
    if constexpr (std::is_same_v<T, std::string>)
        out = reader.string(key);
    else if constexpr (std::is_same_v<T, bool>)
        out = reader.boolean(key);
    else if constexpr (std::is_same_v<T, int>)
        out = reader.small_int(key);
    else if constexpr (std::is_same_v<T, std::int64_t>)
        out = reader.int64(key);
    else if constexpr (std::is_same_v<T, std::uint32_t>)
        out = reader.uint32(key);
    else if constexpr (std::is_same_v<T, std::uint64_t>)
        out = reader.uint64(key);
    else if constexpr (std::is_same_v<T, double>)
        out = reader.number(key);
    else if constexpr (std::is_same_v<T, std::vector<std::string>>)
        out = reader.strings(key);
    else if constexpr (is_described<T>) {
        auto object = reader.object(key);
        out = read_described<T>(object);
        object.finish();
    } else if constexpr (is_vector<T>::value) {
        static_assert(is_described<typename T::value_type>, "a vector member holds strings or described structs");
        out.clear();
        for (auto& item : reader.objects(key)) {
            out.push_back(read_described<typename T::value_type>(item));
            item.finish();
        }
    } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
        out = reader.optional_string(key);
    } else if constexpr (std::is_same_v<T, std::optional<int>>) {
        out.reset();
        reader.small_int(key, &out);
    } else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) {
        out = reader.optional_int64(key);
    } else if constexpr (std::is_same_v<T, std::optional<double>>) {
        out = reader.optional_number(key);
    } else if constexpr (std::is_same_v<T, std::optional<bool>>) {
        const auto& value = reader.any(key);
        out.reset();
        if (value.is_bool())
            out = value.get_bool();
        else if (!value.is_null())
            reader.fail(key, "must be true, false or null");
    } else if constexpr (is_optional<T>::value) {
        out.reset();
        if (!reader.any(key).is_null()) {
            typename T::value_type inner{};
            read_member(reader, key, inner);
            out = std::move(inner);
        }
    } else {
        static_assert(is_described<T>, "this member type has no JSON rule");
    }
}

}  // namespace described_json_detail

template <class T>
    requires described_json_detail::is_described<T>
boost::json::object described_to_json(const T& value)
{
    namespace bd = boost::describe;
    boost::json::object object;
    const auto rules = described_json_detail::rules_of<T>();
    boost::mp11::mp_for_each<bd::describe_members<T, bd::mod_public | bd::mod_inherited>>([&](auto member) {
        const auto rule = described_json_detail::rule_for(rules, member.name);
        const auto& field = value.*member.pointer;
        if constexpr (described_json_detail::is_optional<std::decay_t<decltype(field)>>::value ||
                      described_json_detail::is_vector<std::decay_t<decltype(field)>>::value) {
            if (rule.presence == JsonPresence::when_set && described_json_detail::is_empty(field)) return;
        }
        object[rule.key] = described_json_detail::member_to_json(field);
    });
    return object;
}

template <class T>
    requires described_json_detail::is_described<T>
T read_described(ObjectReader& reader)
{
    namespace bd = boost::describe;
    T value{};
    const auto rules = described_json_detail::rules_of<T>();
    boost::mp11::mp_for_each<bd::describe_members<T, bd::mod_public | bd::mod_inherited>>([&](auto member) {
        const auto rule = described_json_detail::rule_for(rules, member.name);
        const bool may_be_absent = rule.presence == JsonPresence::when_set ||
                                   (rule.presence == JsonPresence::since_added && reader.mode() == ReadMode::tolerant);
        if (may_be_absent && reader.if_present(rule.key) == nullptr) return;
        described_json_detail::read_member(reader, rule.key, value.*member.pointer);
    });
    if constexpr (requires { check_json(reader, value); }) check_json(reader, value);
    return value;
}

}  // namespace pybox::util
