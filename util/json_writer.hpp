// The one JSON writer, in two forms.
//
// JsonForm::text, for people and scripts: like boost::json::serialize (members in their order,
// no whitespace, strings as their bytes with only what JSON requires escaped), except that a
// double is written in its shortest round-trip decimal form ("2.0", "0.166", "1e-07") rather
// than Boost's "2E0". Integral doubles keep a ".0" so they read back as doubles; non-finite
// doubles become null. Always written.
//
// JsonForm::canonical: RFC 8785, the JSON Canonicalization Scheme (JCS), the form a signature
// covers. Object members sorted by their keys as UTF-16 code units, no whitespace, numbers as
// ECMAScript's Number.prototype.toString writes the IEEE 754 double they denote (shortest round
// trip; "1e+30", "4.5", "0.002", "1e-7", "-0" as "0"), strings escaped only where JSON requires
// it ("\"", "\\", \b \f \n \r \t, other control characters as lower-case \u00xx), everything
// else as its UTF-8 bytes. Not written for what RFC 8785 (I-JSON) cannot express: a non-finite
// double, an integer no double holds exactly (beyond 2^53 in magnitude, unless a double holds
// it), a string or key that is not valid UTF-8.
//
// Both forms escape strings alike. Pure.
#pragma once

#include <boost/json/fwd.hpp>

#include <string>

namespace pybox::util {

enum class JsonForm {
    text,       // boost::json::serialize with shortest doubles; never fails
    canonical,  // RFC 8785
};

// `text` is the JSON when `problem` is empty; otherwise `problem` says why the value has no
// such form ("a number is not finite") and `text` is unspecified.
struct WrittenJson {
    std::string text;
    std::string problem;
    bool ok() const { return problem.empty(); }
};
WrittenJson write_json(const boost::json::value& value, JsonForm form);

// write_json(value, JsonForm::text).text.
std::string to_json_text(const boost::json::value& value);

}  // namespace pybox::util
