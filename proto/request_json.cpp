#include "proto/request_json.hpp"

#include "common/api_error_codes.hpp"
#include "util/strict_json.hpp"
#include "util/text.hpp"

#include <cstddef>
#include <string>
#include <utility>

namespace pybox::proto {

namespace json = boost::json;

namespace {

// A request is one flat object; a little room is left so the error names the field, not the depth.
constexpr std::size_t k_max_request_depth = 8;

}  // namespace

Expected<json::value> parse_request_json(std::string_view body)
{
    auto parsed = util::parse_json_strictly(body, k_max_request_depth);
    if (parsed.duplicate_key) {
        return make_error(api_error::k_invalid_request, "The request repeats the key \"" + util::printable_excerpt(*parsed.duplicate_key) +
                                                  "\"; each key may appear only once.");
    }
    if (!parsed.problem.empty()) {
        return make_error(api_error::k_invalid_json, "The request body is not valid JSON: " + parsed.problem + " (at byte " +
                                              std::to_string(parsed.at_byte) + ").");
    }
    return std::move(parsed.value);
}

}  // namespace pybox::proto
