// The model client over HTTP/1.1: POST <endpoint target> to an OpenAI-compatible
// chat-completions service (NVIDIA NIM's hosted API by default), over TLS unless the endpoint
// is a loopback http:// one (model_url.hpp).
//
// TLS: OpenSSL through Asio, TLS 1.2 at least; the peer's certificate chain must verify against
// the system's CA store plus config's ca_file when set, and must name the host
// (host_name_verification: DNS names, or the IP address for an IP host); SNI names the host
// unless it is an IP address. Redirects are never followed (the key would go along).
//
// One call: the request body is built (chat_messages.hpp), the key is read (model_key.hpp),
// then each try opens a fresh connection ("Connection: close"): name resolution, connect and
// handshake within k_connect_timeout, then writing the request and reading the whole answer
// within config's answer_timeout, the answer's header at most k_max_answer_header_bytes and its
// body at most k_max_answer_bytes. A 429 or 5xx answer is tried again as model_retry.hpp
// plans; every other failure ends the call. So a call ends within k_max_tries x
// (k_connect_timeout + answer_timeout) plus three waits of at most k_max_retry_after.
//
// The client holds its config (a copy) and nothing else between calls; calls may overlap. It
// runs on the executor given at construction; the caller keeps the client alive until its calls
// have ended. It writes no log.
#pragma once

#include "daemon/model/model_client.hpp"
#include "daemon/model/model_config.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>

namespace pybox::model {

class ChatCompletionsClient final : public ModelClient {
public:
    ChatCompletionsClient(boost::asio::any_io_executor executor, ModelConfig config);

    boost::asio::awaitable<Expected<ModelAnswer>> complete(std::vector<ModelMessage> messages,
                                                           ModelOptions options) override;

private:
    boost::asio::any_io_executor m_executor;
    ModelConfig m_config;
};

}  // namespace pybox::model
