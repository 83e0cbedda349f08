// Small text helpers: UTF-8 validation, hex, strict base64, the shortest decimal form of a number,
// and safe excerpts of untrusted text for messages and terminals.
// Pure functions; no allocation beyond the returned strings; no failure other than
// base64_decode's nullopt.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pybox::util {

// True when the bytes are well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF), the same rule Boost.JSON applies to strings it parses.
bool is_valid_utf8(std::string_view bytes);
// The bytes as UTF-8 text: each byte that does not begin a well-formed sequence becomes U+FFFD.
std::string utf8_lossy(std::string_view bytes);

// Each byte as two lower-case hex digits.
std::string hex_encode(std::string_view bytes);

// Standard base64 (RFC 4648 section 4) with '=' padding.
std::string base64_encode(std::string_view bytes);
// Strict decode: only the standard alphabet, length a multiple of 4, padding only at the end,
// unused bits zero. Anything else is nullopt.
std::optional<std::string> base64_decode(std::string_view text);

// The shortest decimal text that reads back as the same double: 3 -> "3", 0.5 -> "0.5".
std::string format_number(double value);

// Percent-encodes everything but RFC 3986 unreserved characters (for a URL's path segment or
// query value).
std::string url_encode(std::string_view text);

// Untrusted text made safe to show in one line: printable ASCII is kept, every other byte
// becomes \xNN, and the result is cut at max_bytes of input with "..." appended.
std::string printable_excerpt(std::string_view text, std::size_t max_bytes = 64);

}  // namespace pybox::util
