#include "proto/api.hpp"

#include "common/api_error_codes.hpp"
#include "proto/answers.hpp"
#include "util/text.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace pybox::proto {

namespace json = boost::json;

namespace {

constexpr std::size_t k_max_raw_text_shown = 300;

}  // namespace

Error parse_error_body(unsigned http_status, std::string_view body)
{
    json::error_code ec;
    const json::value document = json::parse(body, ec);
    if (!ec) {
        if (auto answer = error_answer_from_json(document, util::ReadMode::tolerant)) {
            return make_error(std::move(answer->code), std::move(answer->message));
        }
    }
    return make_error(api_error::k_http_ + std::to_string(http_status),
                      "The daemon answered HTTP " + std::to_string(http_status) +
                          (body.empty() ? std::string(" with an empty body.")
                                        : ": " + util::printable_excerpt(body, k_max_raw_text_shown)));
}

}  // namespace pybox::proto
