// The chat-completions words: the request body PyBox sends and the strict reading of answers.
#include "daemon/model/chat_messages.hpp"

#include <boost/json/parse.hpp>

#include "tests/support/source_text.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace pybox::model;
namespace json = boost::json;

namespace {

using pybox::test::replaced;

const std::string k_answer = R"({"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"meta/llama-3.3-70b-instruct",
  "choices":[{"index":0,"message":{"role":"assistant","content":"```python\nprint(42)\n```"},"logprobs":null,
  "finish_reason":"stop"}],"usage":{"prompt_tokens":31,"completion_tokens":12,"total_tokens":43}})";

std::string refusal(const std::string& body, const std::string& code = "model_protocol")
{
    auto answer = parse_chat_answer(body);
    INFO(body);
    REQUIRE_FALSE(answer.has_value());
    CHECK(answer.error().code == code);
    return answer.error().message;
}

}  // namespace

TEST_CASE("The request body names the model, the messages, temperature and max_tokens, not streamed")
{
    const std::vector<ModelMessage> messages{{"system", "Fix the program."}, {"user", "print(1/0)\n\"quoted\""}};
    auto body = chat_request_body("meta/llama-3.3-70b-instruct", messages, ModelOptions{0.5, 100});
    REQUIRE(body.has_value());
    const auto value = json::parse(*body);
    CHECK(value.at("model") == "meta/llama-3.3-70b-instruct");
    CHECK(value.at("messages").as_array().size() == 2);
    CHECK(value.at("messages").at(1).at("role") == "user");
    CHECK(value.at("messages").at(1).at("content") == "print(1/0)\n\"quoted\"");
    CHECK(value.at("temperature").as_double() == 0.5);
    CHECK(value.at("max_tokens").as_int64() == 100);
    CHECK(value.at("stream") == false);
    CHECK(value.as_object().size() == 5);
}

TEST_CASE("A request with no message, an unknown role, or options out of range is refused")
{
    const std::vector<ModelMessage> one{{"user", "hi"}};
    CHECK(chat_request_body("m", {}, {}).error().code == "model_request_invalid");
    CHECK_FALSE(chat_request_body("m", std::vector<ModelMessage>(k_max_messages + 1, {"user", "x"}), {}).has_value());
    CHECK_FALSE(chat_request_body("m", {{"tool", "x"}}, {}).has_value());
    CHECK_FALSE(chat_request_body("m", one, ModelOptions{-0.1, 10}).has_value());
    CHECK_FALSE(chat_request_body("m", one, ModelOptions{2.5, 10}).has_value());
    CHECK_FALSE(chat_request_body("m", one, ModelOptions{0.2, 0}).has_value());
    CHECK_FALSE(chat_request_body("m", one, ModelOptions{0.2, k_max_max_tokens + 1}).has_value());
    CHECK_FALSE(chat_request_body("m", {{"user", std::string(k_max_request_bytes, 'x')}}, {}).has_value());
}

TEST_CASE("An answer gives the first choice's content, the model, the finish reason and the tokens")
{
    auto answer = parse_chat_answer(k_answer);
    REQUIRE(answer.has_value());
    CHECK(answer->content == "```python\nprint(42)\n```");
    CHECK(answer->model == "meta/llama-3.3-70b-instruct");
    CHECK(answer->finish_reason == "stop");
    CHECK(answer->prompt_tokens == 31);
    CHECK(answer->completion_tokens == 12);
    CHECK(answer->tries == 0);
}

TEST_CASE("An answer without a finish reason, or with a null one, is read")
{
    CHECK(parse_chat_answer(replaced(k_answer, R"("finish_reason":"stop")", R"("finish_reason":null)")).has_value());
    CHECK(parse_chat_answer(replaced(k_answer, R"("finish_reason":"stop")", R"("other":"x")")).value().finish_reason.empty());
}

TEST_CASE("An answer whose content is null says there is no text")
{
    refusal(replaced(k_answer, R"("content":"```python\nprint(42)\n```")", R"("content":null)"), "model_no_content");
}

TEST_CASE("An answer that is not the expected JSON is refused, quoting none of it")
{
    refusal("");
    refusal("<html>502 Bad Gateway</html>");
    refusal("[]");
    refusal(k_answer + " {}");
    CHECK(refusal(R"({"model":"a","model":"b"})").find("repeats a key") != std::string::npos);
    refusal(replaced(k_answer, R"("model":"meta/llama-3.3-70b-instruct")", R"("model":"")"));
    refusal(replaced(k_answer, R"("model":"meta/llama-3.3-70b-instruct")", R"("model":7)"));
    refusal(replaced(k_answer, R"("role":"assistant")", R"("role":"user")"));
    refusal(replaced(k_answer, R"("content":"```python\nprint(42)\n```")", R"("content":["x"])"));
    refusal(replaced(k_answer, R"("finish_reason":"stop")", R"("finish_reason":1)"));
    refusal(replaced(k_answer, R"("prompt_tokens":31)", R"("prompt_tokens":-1)"));
    refusal(replaced(k_answer, R"("prompt_tokens":31)", R"("prompt_tokens":3.5)"));
    refusal(replaced(k_answer, R"(,"usage":{"prompt_tokens":31,"completion_tokens":12,"total_tokens":43})", ""));
    refusal(replaced(k_answer, R"("choices":[{"index")", R"("choices":[],"x":[{"index")"));
    refusal(R"({"model":"m","choices":[1],"usage":{"prompt_tokens":1,"completion_tokens":1}})");
    refusal(std::string(k_max_answer_depth + 1, '[') + std::string(k_max_answer_depth + 1, ']'));
    const auto secret = refusal(R"({"model":"m","choices":[{"message":{"content":5}}],"usage":{}, "SECRET_WORD":1})");
    CHECK(secret.find("SECRET_WORD") == std::string::npos);
}

TEST_CASE("An answer larger than the body limit is refused")
{
    const std::string padding(k_max_answer_bytes, ' ');
    CHECK(refusal(k_answer + padding).find("larger than") != std::string::npos);
}

TEST_CASE("A service's error message is quoted with the key blanked out, and only from JSON")
{
    const std::string key = "nvapi-abcdefghijklmnop";
    CHECK(service_error_excerpt(R"({"error":{"message":"Incorrect API key provided: nvapi-abcdefghijklmnop."}})", key) ==
          "Incorrect API key provided: [key].");
    CHECK(service_error_excerpt(R"({"error":"overloaded, key nvapi-abcdefghijklmnop nvapi-abcdefghijklmnop"})", key) ==
          "overloaded, key [key] [key]");
    CHECK(service_error_excerpt(R"({"detail":"Model not found"})", key) == "Model not found");
    CHECK(service_error_excerpt(R"({"message":"slow down\n\u001b[31m"})", key) == "slow down\\x0a\\x1b[31m");
    CHECK(service_error_excerpt("nvapi-abcdefghijklmnop", key).empty());
    CHECK(service_error_excerpt(R"({"error":{"code":1}})", key).empty());
    CHECK(service_error_excerpt(R"({"error":{"message":")" + std::string(500, 'x') + R"("}})", key).size() <= k_quoted_error_bytes + 3);
}
