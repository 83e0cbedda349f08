#include "daemon/model/chat_messages.hpp"

#include "common/api_error_codes.hpp"
#include "util/strict_json.hpp"
#include "util/text.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace pybox::model {

namespace json = boost::json;

namespace {

constexpr std::size_t k_max_model_name_bytes = 256;

Error invalid_request(std::string sentence) { return make_error(api_error::k_model_request_invalid, std::move(sentence)); }

Error bad_answer(std::string_view why)
{
    return make_error(api_error::k_model_protocol, "The model service's answer " + std::string(why) + ".");
}

const json::object* object_at(const json::object& object, std::string_view key)
{
    const auto* value = object.if_contains(key);
    return value ? value->if_object() : nullptr;
}

std::optional<std::int64_t> token_count(const json::object& usage, std::string_view key)
{
    const auto* value = usage.if_contains(key);
    if (value == nullptr) return std::nullopt;
    if (value->is_int64() && value->get_int64() >= 0) return value->get_int64();
    if (value->is_uint64() && value->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
        return static_cast<std::int64_t>(value->get_uint64());
    return std::nullopt;
}

}  // namespace

Expected<std::string> chat_request_body(std::string_view model, const std::vector<ModelMessage>& messages,
                                        const ModelOptions& options)
{
    if (messages.empty() || messages.size() > k_max_messages)
        return invalid_request("A model request holds 1 to " + std::to_string(k_max_messages) + " messages, not " +
                               std::to_string(messages.size()) + ".");
    if (!(options.temperature >= 0.0 && options.temperature <= k_max_temperature))
        return invalid_request("A model request's temperature is from 0 to 2.");
    if (options.max_tokens < 1 || options.max_tokens > k_max_max_tokens)
        return invalid_request("A model request's max_tokens is from 1 to " + std::to_string(k_max_max_tokens) + ".");
    json::array list;
    for (const auto& message : messages) {
        if (message.role != "system" && message.role != "user" && message.role != "assistant")
            return invalid_request("A model message's role is system, user or assistant, not \"" +
                                   util::printable_excerpt(message.role) + "\".");
        list.push_back(json::object{{"role", message.role}, {"content", message.content}});
    }
    const json::object body{{"model", model},
                            {"messages", std::move(list)},
                            {"temperature", options.temperature},
                            {"max_tokens", options.max_tokens},
                            {"stream", false}};
    std::string text = json::serialize(body);
    if (text.size() > k_max_request_bytes)
        return invalid_request("A model request would be " + std::to_string(text.size()) + " bytes, more than " +
                               std::to_string(k_max_request_bytes) + ".");
    return text;
}

Expected<ModelAnswer> parse_chat_answer(std::string_view body)
{
    if (body.size() > k_max_answer_bytes)
        return bad_answer("is larger than " + std::to_string(k_max_answer_bytes) + " bytes");
    const auto parsed = util::parse_json_strictly(body, k_max_answer_depth);
    if (parsed.duplicate_key) return bad_answer("repeats a key");
    if (!parsed.ok()) return bad_answer("is not valid JSON: " + parsed.problem + " (at byte " + std::to_string(parsed.at_byte) + ")");
    const auto* root = parsed.value.if_object();
    if (root == nullptr) return bad_answer("is not a JSON object");

    ModelAnswer answer;
    const auto* model = root->if_contains("model");
    if (model == nullptr || !model->is_string() || model->get_string().empty() ||
        model->get_string().size() > k_max_model_name_bytes)
        return bad_answer("has no \"model\" (a string of 1-" + std::to_string(k_max_model_name_bytes) + " bytes)");
    answer.model = std::string(model->get_string());

    const auto* choices = root->if_contains("choices");
    if (choices == nullptr || !choices->is_array() || choices->get_array().empty())
        return bad_answer("has no \"choices\" (a non-empty array)");
    const auto* choice = choices->get_array().front().if_object();
    if (choice == nullptr) return bad_answer("has a first choice that is not an object");
    const auto* message = object_at(*choice, "message");
    if (message == nullptr) return bad_answer("has no \"message\" object in its first choice");
    if (const auto* role = message->if_contains("role"); role && !(role->is_string() && role->get_string() == "assistant"))
        return bad_answer("has a first message whose role is not \"assistant\"");
    const auto* content = message->if_contains("content");
    if (content == nullptr || content->is_null())
        return make_error(api_error::k_model_no_content, "The model service's answer has no text in its first choice (content is "
                                              "missing or null).");
    if (!content->is_string()) return bad_answer("has a \"content\" that is not a string");
    answer.content = std::string(content->get_string());
    if (const auto* reason = choice->if_contains("finish_reason"); reason && !reason->is_null()) {
        if (!reason->is_string() || reason->get_string().size() > k_max_model_name_bytes)
            return bad_answer("has a \"finish_reason\" that is not a string");
        answer.finish_reason = std::string(reason->get_string());
    }

    const auto* usage = object_at(*root, "usage");
    if (usage == nullptr) return bad_answer("has no \"usage\" object");
    const auto prompt = token_count(*usage, "prompt_tokens");
    const auto completion = token_count(*usage, "completion_tokens");
    if (!prompt || !completion)
        return bad_answer("has no whole numbers \"prompt_tokens\" and \"completion_tokens\" in \"usage\"");
    answer.prompt_tokens = *prompt;
    answer.completion_tokens = *completion;
    return answer;
}

std::string service_error_excerpt(std::string_view body, std::string_view key)
{
    if (body.size() > k_max_answer_bytes) return "";
    const auto parsed = util::parse_json_strictly(body, k_max_answer_depth);
    const auto* root = parsed.ok() ? parsed.value.if_object() : nullptr;
    if (root == nullptr) return "";
    const json::value* text = nullptr;
    if (const auto* error = root->if_contains("error")) {
        if (error->is_string()) text = error;
        else if (const auto* inner = error->if_object()) text = inner->if_contains("message");
    }
    for (const auto* name : {"message", "detail"})
        if (text == nullptr) text = root->if_contains(name);
    if (text == nullptr || !text->is_string()) return "";
    std::string message(text->get_string());
    if (!key.empty())
        for (auto at = message.find(key); at != std::string::npos; at = message.find(key, at + 5))
            message.replace(at, key.size(), "[key]");
    return util::printable_excerpt(message, k_quoted_error_bytes);
}

}  // namespace pybox::model
