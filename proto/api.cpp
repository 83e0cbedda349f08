#include "proto/api.hpp"

#include "proto/text.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace pybox::proto {

namespace json = boost::json;

namespace {

constexpr std::size_t k_max_raw_text_shown = 300;

}  // namespace

std::string error_body(const Error& error, bool retryable)
{
    return json::serialize(json::object{
        {"error", json::object{{"code", error.code}, {"message", error.message}, {"retryable", retryable}}}});
}

Error parse_error_body(unsigned http_status, std::string_view body)
{
    json::error_code ec;
    const json::value document = json::parse(body, ec);
    if (!ec && document.is_object()) {
        const auto* error = document.get_object().if_contains("error");
        if (error != nullptr && error->is_object()) {
            const auto* code = error->get_object().if_contains("code");
            const auto* message = error->get_object().if_contains("message");
            if (code != nullptr && code->is_string() && message != nullptr && message->is_string()) {
                return make_error(std::string(code->get_string()), std::string(message->get_string()));
            }
        }
    }
    return make_error("http_" + std::to_string(http_status),
                      "The daemon answered HTTP " + std::to_string(http_status) +
                          (body.empty() ? std::string(" with an empty body.")
                                        : ": " + printable_excerpt(body, k_max_raw_text_shown)));
}

}  // namespace pybox::proto
