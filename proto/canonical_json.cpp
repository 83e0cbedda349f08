#include "proto/canonical_json.hpp"

#include "util/text.hpp"

#include <boost/json/value.hpp>

#include <algorithm>
#include <type_traits>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace pybox::proto {

namespace json = boost::json;

namespace {

Error not_canonical(std::string why) { return make_error("not_canonical", "The JSON has no canonical form: " + std::move(why) + "."); }

// ECMAScript's Number::toString (ECMA-262 7.1.12.1) of a finite double: the shortest digits
// that read back as `number` (std::to_chars), placed as the standard places them.
std::string es6_number(double number)
{
    if (number == 0) return "0";  // -0 too
    std::array<char, 40> buffer{};
    const auto written = std::to_chars(buffer.data(), buffer.data() + buffer.size(), number, std::chars_format::scientific);
    const std::string_view text(buffer.data(), static_cast<std::size_t>(written.ptr - buffer.data()));
    const bool negative = text.front() == '-';
    const std::size_t e_at = text.find('e');
    std::string digits;
    for (const char c : text.substr(negative ? 1 : 0, e_at - (negative ? 1 : 0)))
        if (c != '.') digits += c;
    // to_chars writes "d.ddde±XX": the value is 0.digits * 10^n with n = XX + 1.
    const int n = std::atoi(std::string(text.substr(e_at + 1)).c_str()) + 1;
    const int k = static_cast<int>(digits.size());
    std::string out = negative ? "-" : "";
    if (k <= n && n <= 21) {
        out += digits;
        out.append(static_cast<std::size_t>(n - k), '0');
    } else if (0 < n && n <= 21) {
        out += digits.substr(0, static_cast<std::size_t>(n));
        out += '.';
        out += digits.substr(static_cast<std::size_t>(n));
    } else if (-6 < n && n <= 0) {
        out += "0.";
        out.append(static_cast<std::size_t>(-n), '0');
        out += digits;
    } else {
        out += digits.front();
        if (k > 1) {
            out += '.';
            out += digits.substr(1);
        }
        out += 'e';
        out += n - 1 >= 0 ? '+' : '-';
        out += std::to_string(std::abs(n - 1));
    }
    return out;
}

// The UTF-16 code units of valid UTF-8 text (a key, to sort by), or nothing for invalid UTF-8
// (overlong forms, surrogates and code points past U+10FFFF included).
std::optional<std::u16string> utf16_units(std::string_view text)
{
    std::u16string units;
    for (std::size_t i = 0; i < text.size();) {
        const auto lead = static_cast<unsigned char>(text[i]);
        std::uint32_t code = 0;
        std::size_t length = 0;
        if (lead < 0x80) {
            code = lead;
            length = 1;
        } else if (lead >= 0xC2 && lead < 0xE0) {
            code = lead & 0x1Fu;
            length = 2;
        } else if (lead >= 0xE0 && lead < 0xF0) {
            code = lead & 0x0Fu;
            length = 3;
        } else if (lead >= 0xF0 && lead < 0xF5) {
            code = lead & 0x07u;
            length = 4;
        } else {
            return std::nullopt;
        }
        if (i + length > text.size()) return std::nullopt;
        for (std::size_t j = 1; j < length; ++j) {
            const auto next = static_cast<unsigned char>(text[i + j]);
            if ((next & 0xC0u) != 0x80u) return std::nullopt;
            code = (code << 6) | (next & 0x3Fu);
        }
        constexpr std::uint32_t k_smallest[] = {0, 0, 0x80, 0x800, 0x10000};
        if (code < k_smallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return std::nullopt;
        if (code >= 0x10000) {
            code -= 0x10000;
            units += static_cast<char16_t>(0xD800 + (code >> 10));
            units += static_cast<char16_t>(0xDC00 + (code & 0x3FFu));
        } else {
            units += static_cast<char16_t>(code);
        }
        i += length;
    }
    return units;
}

Expected<void> append_string(std::string& out, std::string_view text)
{
    if (!util::is_valid_utf8(text)) return not_canonical("a string is not valid UTF-8");
    constexpr std::string_view hex = "0123456789abcdef";
    out += '"';
    std::size_t run = 0;  // the start of the bytes not written yet, none of which needs escaping
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte >= 0x20 && byte != '"' && byte != '\\') continue;
        out.append(text.substr(run, i - run));
        run = i + 1;
        switch (byte) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            out += "\\u00";
            out += hex[static_cast<std::size_t>(byte >> 4)];
            out += hex[byte & 0xFu];
        }
    }
    out.append(text.substr(run));
    out += '"';
    return {};
}

// An integer as the double it denotes, when one holds it exactly.
template <class Integer>
Expected<void> append_integer(std::string& out, Integer value)
{
    const auto number = static_cast<double>(value);
    // 2^63 and 2^64 are the first doubles past the types' ranges; below them the cast back is defined.
    constexpr double k_past_range = sizeof(Integer) == 8 && std::is_signed_v<Integer> ? 9223372036854775808.0
                                                                                      : 18446744073709551616.0;
    if (number >= k_past_range || static_cast<Integer>(number) != value)
        return not_canonical("the integer " + std::to_string(value) + " is not exactly a double");
    out += es6_number(number);
    return {};
}

Expected<void> append(std::string& out, const json::value& value)
{
    switch (value.kind()) {
    case json::kind::null: out += "null"; return {};
    case json::kind::bool_: out += value.get_bool() ? "true" : "false"; return {};
    case json::kind::int64: return append_integer(out, value.get_int64());
    case json::kind::uint64: return append_integer(out, value.get_uint64());
    case json::kind::double_:
        if (!std::isfinite(value.get_double())) return not_canonical("a number is not finite");
        out += es6_number(value.get_double());
        return {};
    case json::kind::string: return append_string(out, value.get_string());
    case json::kind::array: {
        out += '[';
        bool first = true;
        for (const auto& item : value.get_array()) {
            if (!first) out += ',';
            first = false;
            if (auto appended = append(out, item); !appended) return appended;
        }
        out += ']';
        return {};
    }
    case json::kind::object: {
        std::vector<std::pair<std::u16string, const json::key_value_pair*>> members;
        members.reserve(value.get_object().size());
        for (const auto& member : value.get_object()) {
            auto units = utf16_units(member.key());
            if (!units) return not_canonical("a key is not valid UTF-8");
            members.emplace_back(std::move(*units), &member);
        }
        std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        out += '{';
        bool first = true;
        for (const auto& [units, member] : members) {
            if (!first) out += ',';
            first = false;
            if (auto key = append_string(out, member->key()); !key) return key;
            out += ':';
            if (auto appended = append(out, member->value()); !appended) return appended;
        }
        out += '}';
        return {};
    }
    }
    return {};
}

}  // namespace

Expected<std::string> canonical_json(const json::value& value)
{
    std::string out;
    if (auto appended = append(out, value); !appended) return appended.error();
    return out;
}

}  // namespace pybox::proto
