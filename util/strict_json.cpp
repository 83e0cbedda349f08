#include "util/strict_json.hpp"

#include "util/text.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>
#include <boost/json/value_stack.hpp>

#include <charconv>
#include <cmath>
#include <optional>
#include <system_error>
#include <set>
#include <utility>
#include <string>
#include <vector>

namespace pybox::util {

namespace json = boost::json;

namespace {

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
    bool on_number_part(json::string_view s, json::error_code&)
    {
        m_number.append(s.data(), s.size());
        return true;
    }
    bool on_int64(std::int64_t i, json::string_view, json::error_code&)
    {
        m_number.clear();
        m_stack.push_int64(i);
        return true;
    }
    bool on_uint64(std::uint64_t u, json::string_view, json::error_code&)
    {
        m_number.clear();
        m_stack.push_uint64(u);
        return true;
    }
    // Boost 1.81's own conversion may miss the nearest double by one unit in the last place;
    // std::from_chars rounds correctly, so a double written in its shortest form reads back as
    // itself (a signature over the canonical form depends on it).
    // A number beyond a double's range (Boost reads it as infinity) is refused: infinity is not a
    // JSON number, so the value could not be written back as the same text.
    bool on_double(double d, json::string_view s, json::error_code& ec)
    {
        m_number.append(s.data(), s.size());
        double exact = 0;
        const auto read = std::from_chars(m_number.data(), m_number.data() + m_number.size(), exact);
        const double value = read.ec == std::errc() && read.ptr == m_number.data() + m_number.size() ? exact : d;
        m_number.clear();
        if (!std::isfinite(value)) {
            ec = json::error::exponent_overflow;
            return false;
        }
        m_stack.push_double(value);
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
    std::string m_number;  // the text of the number being read
    std::optional<std::string> m_duplicate_key;
};

std::string describe_json_error(const json::error_code& ec, std::size_t max_depth)
{
    if (ec == json::error::too_deep) {
        return "it is nested deeper than " + std::to_string(max_depth) + " levels";
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

}  // namespace

std::string StrictJson::refusal() const
{
    if (duplicate_key) return "repeats the key \"" + printable_excerpt(*duplicate_key) + "\"";
    return "is not JSON: " + problem;
}

StrictJson parse_json_strictly(std::string_view text, std::size_t max_depth)
{
    json::parse_options options;
    options.max_depth = max_depth;
    json::basic_parser<StrictHandler> parser(options);
    json::error_code ec;
    StrictJson result;
    result.at_byte = parser.write_some(false, text.data(), text.size(), ec);
    if (const auto& duplicate = parser.handler().duplicate_key()) {
        result.duplicate_key = *duplicate;
        return result;
    }
    if (!ec && result.at_byte < text.size()) {
        ec = json::error::extra_data;
    }
    if (ec) {
        result.number_too_large = ec == json::error::exponent_overflow;
        result.problem = describe_json_error(ec, max_depth);
        return result;
    }
    result.value = parser.handler().release();
    return result;
}

}  // namespace pybox::util
