#include "util/text.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <system_error>

namespace pybox::util {

namespace {

constexpr std::string_view k_base64_alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> make_base64_table()
{
    std::array<std::int8_t, 256> table{};
    table.fill(-1);
    for (std::size_t i = 0; i < k_base64_alphabet.size(); ++i) {
        table[static_cast<unsigned char>(k_base64_alphabet[i])] = static_cast<std::int8_t>(i);
    }
    return table;
}

constexpr std::array<std::int8_t, 256> k_base64_table = make_base64_table();

// The length of the well-formed UTF-8 sequence at `at` (1-4), or 0 when the bytes there are not
// one (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence_length(std::string_view bytes, std::size_t at)
{
    const std::size_t size = bytes.size();
    auto byte_at = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
    const unsigned char lead = byte_at(at);
    if (lead < 0x80) return 1;
    std::size_t length = 0;
    unsigned char low = 0x80;  // allowed range of the second byte
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) low = 0xA0;   // overlong
        if (lead == 0xED) high = 0x9F;  // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) low = 0x90;   // overlong
        if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
    } else {
        return 0;
    }
    if (at + 1 >= size || byte_at(at + 1) < low || byte_at(at + 1) > high) return 0;
    for (std::size_t k = 2; k < length; ++k)
        if (at + k >= size || (byte_at(at + k) & 0xC0) != 0x80) return 0;
    return length;
}

}  // namespace

bool is_valid_utf8(std::string_view bytes)
{
    for (std::size_t i = 0; i < bytes.size();) {
        const std::size_t length = utf8_sequence_length(bytes, i);
        if (length == 0) return false;
        i += length;
    }
    return true;
}

std::string utf8_lossy(std::string_view bytes)
{
    std::string text;
    text.reserve(bytes.size());
    for (std::size_t i = 0; i < bytes.size();) {
        const std::size_t length = utf8_sequence_length(bytes, i);
        if (length == 0) {
            text += "\xEF\xBF\xBD";
            ++i;
        } else {
            text.append(bytes.substr(i, length));
            i += length;
        }
    }
    return text;
}

std::string base64_encode(std::string_view bytes)
{
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    auto at = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k])); };
    for (; i + 3 <= bytes.size(); i += 3) {
        const std::uint32_t triple = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
        out += k_base64_alphabet[(triple >> 18) & 0x3F];
        out += k_base64_alphabet[(triple >> 12) & 0x3F];
        out += k_base64_alphabet[(triple >> 6) & 0x3F];
        out += k_base64_alphabet[triple & 0x3F];
    }
    const std::size_t rest = bytes.size() - i;
    if (rest == 1) {
        const std::uint32_t triple = at(i) << 16;
        out += k_base64_alphabet[(triple >> 18) & 0x3F];
        out += k_base64_alphabet[(triple >> 12) & 0x3F];
        out += "==";
    } else if (rest == 2) {
        const std::uint32_t triple = (at(i) << 16) | (at(i + 1) << 8);
        out += k_base64_alphabet[(triple >> 18) & 0x3F];
        out += k_base64_alphabet[(triple >> 12) & 0x3F];
        out += k_base64_alphabet[(triple >> 6) & 0x3F];
        out += '=';
    }
    return out;
}

std::optional<std::string> base64_decode(std::string_view text)
{
    if (text.size() % 4 != 0) {
        return std::nullopt;
    }
    std::string out;
    out.reserve(text.size() / 4 * 3);
    for (std::size_t i = 0; i < text.size(); i += 4) {
        const bool last = i + 4 == text.size();
        std::size_t padding = 0;
        if (last && text[i + 3] == '=') {
            padding = text[i + 2] == '=' ? 2 : 1;
        }
        std::uint32_t quad = 0;
        for (std::size_t k = 0; k < 4; ++k) {
            std::int8_t digit = 0;
            if (k < 4 - padding) {
                digit = k_base64_table[static_cast<unsigned char>(text[i + k])];
                if (digit < 0) {
                    return std::nullopt;
                }
            }
            quad = (quad << 6) | static_cast<std::uint32_t>(digit);
        }
        out += static_cast<char>((quad >> 16) & 0xFF);
        if (padding == 2) {
            if ((quad & 0xFFFF) != 0) return std::nullopt;  // non-canonical trailing bits
            break;
        }
        out += static_cast<char>((quad >> 8) & 0xFF);
        if (padding == 1) {
            if ((quad & 0xFF) != 0) return std::nullopt;
            break;
        }
        out += static_cast<char>(quad & 0xFF);
    }
    return out;
}

std::string format_number(double value)
{
    std::array<char, 32> buffer{};
    const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    return std::string(buffer.data(), result.ptr);
}

std::string hex_encode(std::string_view bytes)
{
    constexpr std::string_view hex = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (const char c : bytes) {
        const auto byte = static_cast<unsigned char>(c);
        out += hex[byte >> 4];
        out += hex[byte & 0x0F];
    }
    return out;
}

std::string printable_excerpt(std::string_view text, std::size_t max_bytes)
{
    constexpr std::string_view hex = "0123456789abcdef";
    std::string out;
    const std::string_view shown = text.substr(0, max_bytes);
    for (const char c : shown) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7F && c != '\\') {
            out += c;
        } else {
            out += "\\x";
            out += hex[byte >> 4];
            out += hex[byte & 0x0F];
        }
    }
    if (shown.size() < text.size()) {
        out += "...";
    }
    return out;
}

std::string url_encode(std::string_view text)
{
    static constexpr char k_hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if ((byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') || (byte >= '0' && byte <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            out += c;
        } else {
            out += '%';
            out += k_hex[byte >> 4];
            out += k_hex[byte & 0x0F];
        }
    }
    return out;
}

}  // namespace pybox::util
