// The canonical form of a JSON value: RFC 8785, the JSON Canonicalization Scheme (JCS), which
// the receipt's signature covers (docs/receipt.md "Signature"). Object members sorted by their
// keys as UTF-16 code units, no whitespace, numbers as ECMAScript's Number.prototype.toString
// writes the IEEE 754 double they denote (shortest round trip; "1e+30", "4.5", "0.002", "1e-7",
// "-0" as "0"), strings escaped only where JSON requires it ("\"", "\\", \b \f \n \r \t, other
// control characters as lower-case \u00xx), everything else as its UTF-8 bytes. Pure.
#pragma once

#include "common/error.hpp"

#include <boost/json/fwd.hpp>

#include <string>

namespace pybox::proto {

// Fails with "not_canonical" for what RFC 8785 (I-JSON) cannot express: a non-finite double,
// an integer no double holds exactly (beyond 2^53 in magnitude, unless a double holds it), a
// string or key that is not valid UTF-8.
Expected<std::string> canonical_json(const boost::json::value& value);

}  // namespace pybox::proto
