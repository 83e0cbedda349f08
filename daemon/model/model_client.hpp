// What the daemon's users of a model (the repair loop) call: one chat-completions exchange,
// messages in, the model's answer out. Abstract so the repair loop can be tested against a fake;
// the real one is ChatCompletionsClient (chat_completions_client.hpp).
//
// complete() runs on the executor the implementation was given, never blocks it, and always
// ends within its implementation's bounds. Its failures are values: Error codes
// "model_request_invalid", "model_key_unavailable", "model_unreachable", "model_tls",
// "model_timeout", "model_auth", "model_busy", "model_error", "model_protocol",
// "model_no_content" (docs/model.md says what each means), and "cancelled" when the caller's
// cancellation slot is emitted (the client went away). No Error, and nothing else a model client
// produces, holds the key.
#pragma once

#include "common/error.hpp"
#include "daemon/model/chat_messages.hpp"

#include <boost/asio/awaitable.hpp>

#include <vector>

namespace pybox::model {

class ModelClient {
public:
    virtual ~ModelClient() = default;
    virtual boost::asio::awaitable<Expected<ModelAnswer>> complete(std::vector<ModelMessage> messages,
                                                                   ModelOptions options) = 0;
};

}  // namespace pybox::model
