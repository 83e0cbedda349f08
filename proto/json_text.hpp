// JSON text for people and scripts: like boost::json::serialize, except that a double is
// written in its shortest round-trip decimal form ("2.0", "0.166", "1e-07") rather than
// Boost's "2E0". Integral doubles keep a ".0" so they read back as doubles. Non-finite
// doubles (never produced by PyBox) become null. Pure.
#pragma once

#include <boost/json/fwd.hpp>

#include <string>

namespace pybox::proto {

std::string to_json_text(const boost::json::value& value);

}  // namespace pybox::proto
