// What config.json's "model" says (read by daemon/config/model_section.hpp; docs/model.md has
// the table): which OpenAI-compatible chat-completions service the daemon talks to, with which
// model and key, and the numbers of a call.
#pragma once

#include "daemon/model/chat_messages.hpp"
#include "daemon/model/model_key.hpp"
#include "daemon/model/model_url.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace pybox::model {

struct ModelConfig {
    ModelEndpoint endpoint;
    std::string model;
    KeySource key;
    std::optional<std::filesystem::path> ca_file;
    ModelOptions options;
    std::chrono::seconds answer_timeout{k_default_answer_timeout_s};
};

}  // namespace pybox::model
