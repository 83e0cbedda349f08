// The canonical form of a JSON value: RFC 8785, the JSON Canonicalization Scheme (JCS), which
// the receipt's signature covers (docs/receipt.md "Signature"), as util/json_writer.hpp writes
// it (JsonForm::canonical), with PyBox's error for a value that has none. Pure.
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
