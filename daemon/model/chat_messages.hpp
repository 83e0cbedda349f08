// The words of an OpenAI-compatible chat-completions exchange: the request body PyBox sends and
// the strict, bounded reading of the answer. Pure; unit-tested and fuzzed
// (tests/fuzz/chat_answer_fuzz.cpp).
//
// The answer is untrusted bytes from the network: at most k_max_answer_bytes, one JSON object
// nested at most k_max_answer_depth levels, no repeated key, nothing after it. Of it PyBox
// reads choices[0].message.content (a string; role "assistant" when present),
// choices[0].finish_reason (a string or null, optional), model (a non-empty string) and
// usage.prompt_tokens and usage.completion_tokens (whole numbers >= 0), each with its exact
// type; keys it does not read are ignored, as services add their own. Anything else is Error
// "model_protocol" with a sentence that quotes nothing of the answer but its structure.
#pragma once

#include "common/error.hpp"
#include "daemon/model/model_limits.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::model {

struct ModelMessage {
    std::string role;  // "system", "user" or "assistant"
    std::string content;
};

// What one call asks for beyond its messages.
struct ModelOptions {
    double temperature = k_default_temperature;
    std::int64_t max_tokens = k_default_max_tokens;
};

struct ModelAnswer {
    std::string content;        // the model's text: untrusted
    std::string model;          // the model that answered, as the service names it
    std::string finish_reason;  // "stop", "length", ... or "" when the service gave none
    std::int64_t prompt_tokens = 0;
    std::int64_t completion_tokens = 0;
    // Filled by the client: the whole call (every try and wait) and how many tries it took.
    std::chrono::milliseconds latency{0};
    int tries = 0;
};

// The request body: {"model", "messages": [{"role", "content"}...], "temperature",
// "max_tokens", "stream": false}. Error "model_request_invalid" for no message or more than
// k_max_messages, an unknown role, a temperature outside 0-k_max_temperature, max_tokens
// outside 1-k_max_max_tokens, or a body over k_max_request_bytes.
Expected<std::string> chat_request_body(std::string_view model, const std::vector<ModelMessage>& messages,
                                        const ModelOptions& options);

// The answer of a 2xx response, read as above (latency and tries left 0).
Expected<ModelAnswer> parse_chat_answer(std::string_view body);

// For the error of a non-2xx answer: the service's own error message ({"error": {"message"}},
// {"error": "..."}, {"message"} or {"detail"}), printable and at most k_quoted_error_bytes, with
// every occurrence of `key` replaced by "[key]" (some services quote the key they refused); ""
// when the body has none.
std::string service_error_excerpt(std::string_view body, std::string_view key);

}  // namespace pybox::model
