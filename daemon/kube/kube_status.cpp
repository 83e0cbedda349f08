#include "daemon/kube/kube_status.hpp"

#include "common/api_error_codes.hpp"
#include "util/strict_json.hpp"

#include <boost/json/value.hpp>

namespace pybox::kube {

namespace {

namespace json = boost::json;

// A Status is a few levels deep; anything deeper is not one.
constexpr std::size_t k_status_depth = 8;
// How much of a body that is not a Status is quoted, and how many causes are named.
constexpr std::size_t k_quoted_body_chars = 200;
constexpr std::size_t k_named_causes = 8;

std::optional<std::string> string_at(const json::object& object, std::string_view key, bool& bad)
{
    const auto* value = object.if_contains(key);
    if (value == nullptr || value->is_null()) return std::nullopt;
    if (!value->is_string()) {
        bad = true;
        return std::nullopt;
    }
    return std::string(value->get_string());
}

std::string printable(std::string_view text)
{
    std::string out;
    for (const char c : text.substr(0, k_quoted_body_chars))
        out += static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f ? c : '?';
    return out;
}

std::string reason_phrase(unsigned http_status)
{
    switch (http_status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
    }
}

}  // namespace

std::optional<KubeStatus> parse_kube_status(std::string_view body)
{
    const auto parsed = util::parse_json_strictly(body, k_status_depth);
    if (!parsed.ok()) return std::nullopt;
    return read_kube_status(parsed.value);
}

std::optional<KubeStatus> read_kube_status(const json::value& value)
{
    if (!value.is_object()) return std::nullopt;
    const auto& object = value.get_object();
    bool bad = false;
    if (string_at(object, "kind", bad) != std::optional<std::string>("Status") || bad) return std::nullopt;
    KubeStatus status;
    status.status = string_at(object, "status", bad).value_or("");
    status.reason = string_at(object, "reason", bad).value_or("");
    status.message = string_at(object, "message", bad).value_or("");
    if (const auto* code = object.if_contains("code"); code != nullptr && !code->is_null()) {
        const auto* number = code->if_int64();
        if (number == nullptr || *number < 0 || *number > 999) return std::nullopt;
        status.code = static_cast<unsigned>(*number);
    }
    if (const auto* details = object.if_contains("details"); details != nullptr && !details->is_null()) {
        if (!details->is_object()) return std::nullopt;
        if (const auto* causes = details->get_object().if_contains("causes"); causes != nullptr && !causes->is_null()) {
            if (!causes->is_array()) return std::nullopt;
            for (const auto& cause : causes->get_array()) {
                if (!cause.is_object()) return std::nullopt;
                const auto field = string_at(cause.get_object(), "field", bad).value_or("");
                const auto message = string_at(cause.get_object(), "message", bad).value_or("");
                status.causes.push_back(field.empty() ? message : field + ": " + message);
            }
        }
    }
    if (bad) return std::nullopt;
    return status;
}

Error status_error(std::string_view what, unsigned http_status, std::string_view body)
{
    const std::string phrase = reason_phrase(http_status);
    std::string sentence = std::string(what) + ": the apiserver answered " + std::to_string(http_status) +
                           (phrase.empty() ? "" : " " + phrase);
    if (const auto status = parse_kube_status(body)) {
        if (!status->reason.empty()) sentence += " (" + status->reason + ")";
        if (!status->message.empty()) sentence += ": " + printable(status->message);
        if (status->message.empty() && !status->causes.empty()) {
            sentence += ":";
            for (std::size_t i = 0; i < status->causes.size() && i < k_named_causes; ++i)
                sentence += (i == 0 ? " " : "; ") + printable(status->causes[i]);
        }
    } else if (!body.empty()) {
        sentence += ": " + printable(body);
    }
    if (http_status == 401) sentence += "; the apiserver does not accept the kubeconfig's credentials";
    return make_error(http_status == 404 ? api_error::k_engine_no_such_object : api_error::k_engine_error, sentence + ".");
}

}  // namespace pybox::kube
