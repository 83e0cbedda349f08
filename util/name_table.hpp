// The names of an enum's values as a document writes them, and the two lookups. Pure.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace pybox::util {

template <class Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, std::string_view>, N>;

// The name of `value`, or "UNRECOGNIZED" for a value the table does not name.
template <class Enum, std::size_t N>
std::string_view name_of(const NameTable<Enum, N>& table, Enum value)
{
    for (const auto& [entry, name] : table)
        if (entry == value) return name;
    return "UNRECOGNIZED";
}

template <class Enum, std::size_t N>
std::optional<Enum> value_of(const NameTable<Enum, N>& table, std::string_view text)
{
    for (const auto& [entry, name] : table)
        if (name == text) return entry;
    return std::nullopt;
}

}  // namespace pybox::util
