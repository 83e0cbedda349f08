#include "util/json_writer.hpp"

#include "util/text.hpp"

#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace pybox::util {

namespace json = boost::json;

namespace {

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

// A string as JSON writes it, in both forms (and as boost::json::serialize does): the bytes as
// they are, but "\"", "\\", \b \f \n \r \t and other control characters as lower-case \u00xx.
void append_escaped(std::string& out, std::string_view text)
{
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
}

class Writer {
public:
    explicit Writer(JsonForm form) : m_form(form) {}

    // False when the value has no such form; the first reason found is in problem().
    bool append(const json::value& value)
    {
        switch (value.kind()) {
        case json::kind::null: m_out += "null"; return true;
        case json::kind::bool_: m_out += value.get_bool() ? "true" : "false"; return true;
        case json::kind::int64: return append_integer(value.get_int64());
        case json::kind::uint64: return append_integer(value.get_uint64());
        case json::kind::double_: return append_double(value.get_double());
        case json::kind::string: return append_string(value.get_string());
        case json::kind::array: {
            m_out += '[';
            bool first = true;
            for (const auto& item : value.get_array()) {
                if (!first) m_out += ',';
                first = false;
                if (!append(item)) return false;
            }
            m_out += ']';
            return true;
        }
        case json::kind::object: return m_form == JsonForm::canonical ? append_sorted(value.get_object())
                                                                      : append_in_order(value.get_object());
        }
        return true;
    }

    WrittenJson result() && { return {std::move(m_out), std::move(m_problem)}; }

private:
    bool fail(std::string why)
    {
        m_problem = std::move(why);
        return false;
    }

    bool append_string(std::string_view text)
    {
        if (m_form == JsonForm::canonical && !is_valid_utf8(text)) return fail("a string is not valid UTF-8");
        append_escaped(m_out, text);
        return true;
    }

    // Text: the integer in decimal. Canonical: as the double it denotes, when one holds it exactly.
    template <class Integer>
    bool append_integer(Integer value)
    {
        if (m_form == JsonForm::text) {
            std::array<char, 24> buffer{};
            const auto written = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
            m_out.append(buffer.data(), written.ptr);
            return true;
        }
        const auto number = static_cast<double>(value);
        // 2^63 and 2^64 are the first doubles past the types' ranges; below them the cast back is defined.
        constexpr double k_past_range = sizeof(Integer) == 8 && std::is_signed_v<Integer> ? 9223372036854775808.0
                                                                                          : 18446744073709551616.0;
        if (number >= k_past_range || static_cast<Integer>(number) != value)
            return fail("the integer " + std::to_string(value) + " is not exactly a double");
        m_out += es6_number(number);
        return true;
    }

    bool append_double(double number)
    {
        if (!std::isfinite(number)) {
            if (m_form == JsonForm::canonical) return fail("a number is not finite");
            m_out += "null";
            return true;
        }
        if (m_form == JsonForm::canonical) {
            m_out += es6_number(number);
            return true;
        }
        std::string text = format_number(number);
        if (text.find_first_of(".eE") == std::string::npos) text += ".0";
        m_out += text;
        return true;
    }

    bool append_in_order(const json::object& object)
    {
        m_out += '{';
        bool first = true;
        for (const auto& member : object) {
            if (!first) m_out += ',';
            first = false;
            append_escaped(m_out, member.key());
            m_out += ':';
            if (!append(member.value())) return false;
        }
        m_out += '}';
        return true;
    }

    // Every key is checked before any member is written, then the members go in the order of
    // their keys' UTF-16 code units.
    bool append_sorted(const json::object& object)
    {
        std::vector<std::pair<std::u16string, const json::key_value_pair*>> members;
        members.reserve(object.size());
        for (const auto& member : object) {
            auto units = utf16_units(member.key());
            if (!units) return fail("a key is not valid UTF-8");
            members.emplace_back(std::move(*units), &member);
        }
        std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        m_out += '{';
        bool first = true;
        for (const auto& [units, member] : members) {
            if (!first) m_out += ',';
            first = false;
            append_escaped(m_out, member->key());
            m_out += ':';
            if (!append(member->value())) return false;
        }
        m_out += '}';
        return true;
    }

    JsonForm m_form;
    std::string m_out;
    std::string m_problem;
};

}  // namespace

WrittenJson write_json(const json::value& value, JsonForm form)
{
    Writer writer(form);
    writer.append(value);
    return std::move(writer).result();
}

std::string to_json_text(const json::value& value) { return write_json(value, JsonForm::text).text; }

}  // namespace pybox::util
