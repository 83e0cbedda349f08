// Fuzz target: the model client's readers of a chat-completions service's answers
// (daemon/model/chat_messages.hpp). Invariants: neither crashes; an accepted answer has a model
// name and token counts >= 0 and a content that is in the input's JSON; the error excerpt is
// bounded and never holds the key, even when the input quotes it.
#include "daemon/model/chat_messages.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    if (const auto answer = pybox::model::parse_chat_answer(body)) {
        if (answer->model.empty() || answer->prompt_tokens < 0 || answer->completion_tokens < 0) std::abort();
    } else if (answer.error().code != "model_protocol" && answer.error().code != "model_no_content") {
        std::abort();
    }
    constexpr std::string_view key = "nvapi-FUZZ";
    const auto excerpt = pybox::model::service_error_excerpt(body, key);
    // Every byte may be escaped as \xNN (4 characters), plus "...".
    if (excerpt.size() > 4 * pybox::model::k_quoted_error_bytes + 3 || excerpt.find(key) != std::string::npos)
        std::abort();
    return 0;
}
