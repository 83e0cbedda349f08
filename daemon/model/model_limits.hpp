// The model client's fixed numbers (docs/model.md states them; tests/unit/model_docs_test.cpp
// compares). Kept beside the client rather than in common/limits.hpp: nothing else uses them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace pybox::model {

// Resolving the name, connecting and the TLS handshake together ...
inline constexpr std::chrono::milliseconds k_connect_timeout{10'000};
// ... then sending the request and reading the whole answer (config.json model.answer_timeout_s).
inline constexpr std::int64_t k_default_answer_timeout_s = 120;
inline constexpr std::int64_t k_max_answer_timeout_s = 600;
// An answer's body, and its header, at most.
inline constexpr std::size_t k_max_answer_bytes = 1024 * 1024;
inline constexpr std::size_t k_max_answer_header_bytes = 16 * 1024;
// The answer's JSON is nested at most this deep.
inline constexpr std::size_t k_max_answer_depth = 16;
// A request's body at most (the messages, JSON-escaped), and how many messages it may hold.
inline constexpr std::size_t k_max_request_bytes = 512 * 1024;
inline constexpr std::size_t k_max_messages = 64;
// Tries of one call: the first and up to three more after a 429 or a 5xx answer, waiting the
// answer's Retry-After when it has one, else 1 s, doubling, at most 8 s. A Retry-After longer
// than k_max_retry_after ends the call instead: the service will not be ready within a wait
// worth making.
inline constexpr int k_max_tries = 4;
inline constexpr std::chrono::milliseconds k_backoff_first{1'000};
inline constexpr std::chrono::milliseconds k_backoff_longest{8'000};
inline constexpr std::chrono::seconds k_max_retry_after{30};
// The key: 1-4096 printable ASCII characters without spaces (it is sent in a header); a key
// file holds at most this many bytes.
inline constexpr std::size_t k_max_key_bytes = 4'096;
// What a call asks for by default, and the ranges config.json may choose from.
inline constexpr std::int64_t k_default_max_tokens = 4'096;
inline constexpr std::int64_t k_max_max_tokens = 32'768;
inline constexpr double k_default_temperature = 0.2;
inline constexpr double k_max_temperature = 2.0;
// How much of a service's error message is quoted in an Error.
inline constexpr std::size_t k_quoted_error_bytes = 200;

}  // namespace pybox::model
