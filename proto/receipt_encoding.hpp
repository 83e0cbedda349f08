// Receipt stream encodings, internal to proto/receipt*.cpp: the names receipt_to_json()
// writes into capture.<stream>_encoding and receipt_from_json() accepts. Program output that is
// valid UTF-8 is stored as text, anything else as base64, so the bytes survive exactly.
#pragma once

#include <string_view>

namespace pybox::proto::detail {

inline constexpr std::string_view k_encoding_utf8 = "utf-8";
inline constexpr std::string_view k_encoding_base64 = "base64";

}  // namespace pybox::proto::detail
