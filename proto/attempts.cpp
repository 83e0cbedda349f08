#include "proto/attempts.hpp"

#include "common/api_error_codes.hpp"
#include "util/text.hpp"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <array>

namespace pybox::proto {

namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 9> k_keys{"run_id",     "created_at", "expires_at",
                                                 "container_id", "settled_at", "box",
                                                 "box_removed_at", "run_parent_released", "errors"};
// Written since system mode; entries before it lack it.
constexpr std::string_view k_owner_key = "owner_uid";

Error invalid(std::string_view key, std::string_view why)
{
    return make_error(api_error::k_invalid_attempt, "attempt key \"" + std::string(key) + "\" " + std::string(why) + ".");
}

// The string under `key`: valid UTF-8 of at most max_bytes.
Expected<std::string> bounded_string(const json::object& object, std::string_view key, std::size_t max_bytes)
{
    const auto* value = object.if_contains(key);
    if (value == nullptr || !value->is_string()) return invalid(key, "must be a string");
    const std::string_view text = value->get_string();
    if (text.size() > max_bytes) return invalid(key, "is longer than " + std::to_string(max_bytes) + " bytes");
    if (!util::is_valid_utf8(text)) return invalid(key, "is not UTF-8");
    return std::string(text);
}

}  // namespace

json::object to_json(const SettledAttempt& attempt) { return util::described_to_json(attempt); }

void check_json(util::ObjectReader& reader, const SettledAttempt& attempt)
{
    if (reader.mode() == util::ReadMode::strict && attempt.box != k_box_removed_by_sweep && attempt.box != k_box_not_found)
        reader.fail("box", "must be REMOVED_BY_SWEEP or NOT_FOUND");
}

Expected<SettledAttempt> settled_attempt_from_json(const json::value& value)
{
    const auto* object = value.if_object();
    if (object == nullptr) return make_error(api_error::k_invalid_attempt, "An attempt must be a JSON object.");
    for (const auto& [key, item] : *object)
        if (std::find(k_keys.begin(), k_keys.end(), std::string_view(key)) == k_keys.end() && key != k_owner_key)
            return invalid(key, "is not an attempt field");
    const bool has_owner = object->contains(k_owner_key);
    if (object->size() != k_keys.size() + (has_owner ? 1 : 0))
        return make_error(api_error::k_invalid_attempt, "An attempt lacks a field.");

    SettledAttempt attempt;
    auto run_id = bounded_string(*object, "run_id", 32);
    if (!run_id) return run_id.error();
    if (!is_run_id(*run_id)) return invalid("run_id", "must be 32 lower-case hex digits");
    attempt.run_id = std::move(*run_id);
    for (auto [key, field] : {std::pair{"created_at", &attempt.created_at}, std::pair{"container_id", &attempt.container_id},
                              std::pair{"settled_at", &attempt.settled_at}}) {
        auto text = bounded_string(*object, key, k_max_attempt_text_bytes);
        if (!text) return text.error();
        *field = std::move(*text);
    }
    const auto& expires = object->at("expires_at");
    if (!expires.is_int64()) return invalid("expires_at", "must be an integer");
    attempt.expires_at = expires.get_int64();

    auto box = bounded_string(*object, "box", k_max_attempt_text_bytes);
    if (!box) return box.error();
    if (*box != k_box_removed_by_sweep && *box != k_box_not_found)
        return invalid("box", "must be REMOVED_BY_SWEEP or NOT_FOUND");
    attempt.box = std::move(*box);

    if (!object->at("box_removed_at").is_null()) {
        auto removed_at = bounded_string(*object, "box_removed_at", k_max_attempt_text_bytes);
        if (!removed_at) return removed_at.error();
        attempt.box_removed_at = std::move(*removed_at);
    }
    const auto& released = object->at("run_parent_released");
    if (!released.is_bool()) return invalid("run_parent_released", "must be true or false");
    attempt.run_parent_released = released.get_bool();

    const auto* errors = object->at("errors").if_array();
    if (errors == nullptr) return invalid("errors", "must be an array");
    if (errors->size() > k_max_attempt_errors)
        return invalid("errors", "holds more than " + std::to_string(k_max_attempt_errors) + " entries");
    for (const auto& error : *errors) {
        if (!error.is_string() || error.get_string().size() > k_max_attempt_error_bytes ||
            !util::is_valid_utf8(error.get_string()))
            return invalid("errors", "must hold UTF-8 strings of at most " +
                                         std::to_string(k_max_attempt_error_bytes) + " bytes");
        attempt.errors.emplace_back(error.get_string());
    }
    if (has_owner) {
        const auto& owner = object->at(k_owner_key);
        if (!owner.is_int64() || owner.get_int64() < 0 || owner.get_int64() > UINT32_MAX)
            return invalid(k_owner_key, "must be a uid (an integer from 0 to 4294967295)");
        attempt.owner_uid = static_cast<std::uint32_t>(owner.get_int64());
    }
    return attempt;
}

Expected<SettledAttempt> parse_settled_attempt(std::string_view line)
{
    if (line.size() > k_max_attempt_line_bytes)
        return make_error(api_error::k_invalid_attempt,
                          "An attempt line is longer than " + std::to_string(k_max_attempt_line_bytes) + " bytes.");
    json::parse_options options;
    options.max_depth = 4;
    boost::system::error_code ec;
    const json::value value = json::parse(line, ec, {}, options);
    if (ec) return make_error(api_error::k_invalid_attempt, "An attempt line is not JSON: " + ec.message() + ".");
    return settled_attempt_from_json(value);
}

bool is_run_id(std::string_view text)
{
    return text.size() == 32 &&
           std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string bounded_text(std::string_view text, std::size_t max_bytes)
{
    if (text.size() <= max_bytes) return std::string(text);
    std::size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return std::string(text.substr(0, cut));
}

}  // namespace pybox::proto
