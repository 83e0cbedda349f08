#include "proto/canonical_json.hpp"

#include "common/api_error_codes.hpp"
#include "util/json_writer.hpp"

#include <utility>

namespace pybox::proto {

Expected<std::string> canonical_json(const boost::json::value& value)
{
    auto written = util::write_json(value, util::JsonForm::canonical);
    if (!written.ok()) return make_error(api_error::k_not_canonical, "The JSON has no canonical form: " + written.problem + ".");
    return std::move(written.text);
}

}  // namespace pybox::proto
