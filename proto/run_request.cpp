#include "proto/run_request.hpp"

#include "common/limits.hpp"
#include "proto/box_policy.hpp"
#include "proto/json_text.hpp"
#include "proto/text.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_stack.hpp>

#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pybox::proto {

namespace json = boost::json;

namespace {

// A request is one flat object; a little room is left so the error names the field, not the depth.
constexpr std::size_t k_max_request_depth = 8;

// Builds the document like boost::json::parser, but refuses an object that repeats a key
// (boost::json::parser keeps the last one silently).
class StrictHandler {
public:
    static constexpr std::size_t max_object_size = json::object::max_size();
    static constexpr std::size_t max_array_size = json::array::max_size();
    static constexpr std::size_t max_key_size = json::string::max_size();
    static constexpr std::size_t max_string_size = json::string::max_size();

    StrictHandler() { m_stack.reset(); }

    json::value release() { return m_stack.release(); }
    // The repeated key, once one was found.
    const std::optional<std::string>& duplicate_key() const { return m_duplicate_key; }

    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }
    bool on_object_begin(json::error_code&)
    {
        m_keys.emplace_back();
        return true;
    }
    bool on_object_end(std::size_t n, json::error_code&)
    {
        m_keys.pop_back();
        m_stack.push_object(n);
        return true;
    }
    bool on_array_begin(json::error_code&) { return true; }
    bool on_array_end(std::size_t n, json::error_code&)
    {
        m_stack.push_array(n);
        return true;
    }
    bool on_key_part(json::string_view s, std::size_t, json::error_code&)
    {
        m_key.append(s.data(), s.size());
        m_stack.push_chars(s);
        return true;
    }
    bool on_key(json::string_view s, std::size_t, json::error_code& ec)
    {
        m_key.append(s.data(), s.size());
        if (!m_keys.back().insert(m_key).second) {
            m_duplicate_key = m_key;
            ec = json::error::syntax;
            return false;
        }
        m_key.clear();
        m_stack.push_key(s);
        return true;
    }
    bool on_string_part(json::string_view s, std::size_t, json::error_code&)
    {
        m_stack.push_chars(s);
        return true;
    }
    bool on_string(json::string_view s, std::size_t, json::error_code&)
    {
        m_stack.push_string(s);
        return true;
    }
    bool on_number_part(json::string_view, json::error_code&) { return true; }
    bool on_int64(std::int64_t i, json::string_view, json::error_code&)
    {
        m_stack.push_int64(i);
        return true;
    }
    bool on_uint64(std::uint64_t u, json::string_view, json::error_code&)
    {
        m_stack.push_uint64(u);
        return true;
    }
    bool on_double(double d, json::string_view, json::error_code&)
    {
        m_stack.push_double(d);
        return true;
    }
    bool on_bool(bool b, json::error_code&)
    {
        m_stack.push_bool(b);
        return true;
    }
    bool on_null(json::error_code&)
    {
        m_stack.push_null();
        return true;
    }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }

private:
    json::value_stack m_stack;
    std::vector<std::set<std::string>> m_keys;  // keys seen in each open object
    std::string m_key;
    std::optional<std::string> m_duplicate_key;
};

Error invalid_request(std::string message)
{
    return make_error("invalid_request", std::move(message));
}

std::string describe_json_error(const json::error_code& ec)
{
    if (ec == json::error::too_deep) {
        return "it is nested deeper than " + std::to_string(k_max_request_depth) + " levels";
    }
    if (ec == json::error::extra_data) {
        return "there are bytes after the JSON value";
    }
    if (ec == json::error::incomplete) {
        return "it ends before the JSON value does";
    }
    if (ec == json::error::exponent_overflow) {
        return "a number is too large";
    }
    return "it is not well-formed JSON text in UTF-8 (" + ec.message() + ")";
}

Expected<json::value> parse_strict_json(std::string_view body)
{
    json::parse_options options;
    options.max_depth = k_max_request_depth;
    json::basic_parser<StrictHandler> parser(options);
    json::error_code ec;
    const std::size_t used = parser.write_some(false, body.data(), body.size(), ec);
    if (const auto& duplicate = parser.handler().duplicate_key()) {
        return invalid_request("The request repeats the key \"" + printable_excerpt(*duplicate) +
                               "\"; each key may appear only once.");
    }
    if (!ec && used < body.size()) {
        ec = json::error::extra_data;
    }
    if (ec) {
        return make_error("invalid_json", "The request body is not valid JSON: " + describe_json_error(ec) +
                                              " (at byte " + std::to_string(used) + ").");
    }
    return parser.handler().release();
}

std::string accepted_images_text()
{
    std::string text;
    for (const auto& name : known_images()) {
        text += text.empty() ? name : ", " + name;
    }
    return text;
}

Error output_limit_error(const std::string& got)
{
    return make_error("output_limit_out_of_range",
                      "output_limit_bytes must be an integer between " +
                          std::to_string(limits::k_min_output_limit_bytes) + " and " +
                          std::to_string(limits::k_max_output_limit_bytes) + " (got " + got + ").");
}

}  // namespace

Expected<RunRequest> parse_run_request(std::string_view body)
{
    auto document = parse_strict_json(body);
    if (!document) {
        return document.error();
    }
    if (!document->is_object()) {
        return invalid_request("The request body must be one JSON object with the key \"source\".");
    }
    RunRequest request;
    bool has_source = false;
    for (const auto& [key, value] : document->get_object()) {
        if (key == "source") {
            if (!value.is_string()) {
                return invalid_request("source must be a string holding the program's text.");
            }
            request.source.assign(value.get_string().data(), value.get_string().size());
            has_source = true;
        } else if (key == "timeout_s") {
            if (!value.is_number()) {
                return invalid_request("timeout_s must be a number of seconds between " +
                                       format_number(limits::k_min_timeout_s) + " and " +
                                       format_number(limits::k_max_timeout_s) + ".");
            }
            request.timeout_s = value.to_number<double>();
        } else if (key == "image") {
            if (!value.is_string()) {
                return invalid_request("image must be a string, one of " + accepted_images_text() + ".");
            }
            request.image.assign(value.get_string().data(), value.get_string().size());
        } else if (key == "output_limit_bytes") {
            if (value.is_double()) {
                return output_limit_error(format_number(value.get_double()));
            }
            if (value.is_int64()) {
                if (value.get_int64() < 0) {
                    return output_limit_error(std::to_string(value.get_int64()));
                }
                request.output_limit_bytes = static_cast<std::size_t>(value.get_int64());
            } else if (value.is_uint64()) {
                request.output_limit_bytes = static_cast<std::size_t>(value.get_uint64());
            } else {
                return invalid_request("output_limit_bytes must be an integer between " +
                                       std::to_string(limits::k_min_output_limit_bytes) + " and " +
                                       std::to_string(limits::k_max_output_limit_bytes) + ".");
            }
        } else {
            return invalid_request("Unknown key \"" + printable_excerpt(key) +
                                   "\"; the accepted keys are source, timeout_s, image and "
                                   "output_limit_bytes.");
        }
    }
    if (!has_source) {
        return invalid_request("source is required: a string holding the program's text.");
    }
    auto valid = validate_run_request(request);
    if (!valid) {
        return valid.error();
    }
    return request;
}

Expected<void> validate_run_request(const RunRequest& request)
{
    if (request.source.size() > limits::k_max_source_bytes) {
        return make_error("source_too_large", "source must be at most " +
                                                  std::to_string(limits::k_max_source_bytes) +
                                                  " bytes (got " + std::to_string(request.source.size()) +
                                                  ").");
    }
    if (!is_valid_utf8(request.source)) {
        return invalid_request("source must be UTF-8 text.");
    }
    if (!std::isfinite(request.timeout_s) || request.timeout_s < limits::k_min_timeout_s ||
        request.timeout_s > limits::k_max_timeout_s) {
        return make_error("timeout_out_of_range", "timeout_s must be between " +
                                                      format_number(limits::k_min_timeout_s) + " and " +
                                                      format_number(limits::k_max_timeout_s) +
                                                      " seconds (got " + format_number(request.timeout_s) +
                                                      ").");
    }
    if (request.output_limit_bytes < limits::k_min_output_limit_bytes ||
        request.output_limit_bytes > limits::k_max_output_limit_bytes) {
        return output_limit_error(std::to_string(request.output_limit_bytes));
    }
    if (!policy_for_image(request.image)) {
        return make_error("unknown_image", "image must be one of " + accepted_images_text() + " (got \"" +
                                               printable_excerpt(request.image) + "\").");
    }
    return {};
}

std::string serialize_run_request(const RunRequest& request)
{
    json::object body;
    body["source"] = request.source;
    body["timeout_s"] = request.timeout_s;
    body["image"] = request.image;
    body["output_limit_bytes"] = static_cast<std::uint64_t>(request.output_limit_bytes);
    return to_json_text(body);
}

}  // namespace pybox::proto
