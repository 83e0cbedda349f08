#include "proto/json_text.hpp"

#include "util/text.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <cmath>

namespace pybox::proto {

namespace json = boost::json;

namespace {

void append_double(std::string& out, double number)
{
    if (!std::isfinite(number)) {
        out += "null";
        return;
    }
    std::string text = util::format_number(number);
    if (text.find_first_of(".eE") == std::string::npos) text += ".0";
    out += text;
}

void append(std::string& out, const json::value& value)
{
    switch (value.kind()) {
    case json::kind::double_:
        append_double(out, value.get_double());
        return;
    case json::kind::array: {
        out += '[';
        bool first = true;
        for (const auto& item : value.get_array()) {
            if (!first) out += ',';
            first = false;
            append(out, item);
        }
        out += ']';
        return;
    }
    case json::kind::object: {
        out += '{';
        bool first = true;
        for (const auto& member : value.get_object()) {
            if (!first) out += ',';
            first = false;
            out += json::serialize(json::string_view(member.key()));
            out += ':';
            append(out, member.value());
        }
        out += '}';
        return;
    }
    default:
        out += json::serialize(value);
        return;
    }
}

}  // namespace

std::string to_json_text(const json::value& value)
{
    std::string out;
    append(out, value);
    return out;
}

}  // namespace pybox::proto
