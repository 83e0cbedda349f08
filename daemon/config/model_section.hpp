// The reader of config.json's "model" (its keys in config_keys.hpp's model section; docs/model.md
// has the table): which OpenAI-compatible chat-completions service the daemon talks to, with
// which model and key, and the numbers of a call.
//
//   "model": {"base_url": "https://integrate.api.nvidia.com", "model": "meta/llama-3.3-70b-instruct",
//             "api_key_env": "NVIDIA_API_KEY"}
//
// "model" and exactly one of "api_key_env" / "api_key_file" are required; "base_url" defaults to
// NVIDIA NIM's hosted API (daemon/model/model_url.hpp says which URLs are accepted and how "/v1"
// is handled); "ca_file" adds a PEM file of CA certificates to the system's; "temperature",
// "max_tokens" and "answer_timeout_s" set what a call asks for and how long its answer may
// take. Unknown keys, wrong types, relative paths and values out of range are refused with
// "config_invalid" naming the key. Pure; unit-tested.
#pragma once

#include "common/error.hpp"
#include "daemon/model/model_config.hpp"

#include <boost/json/value.hpp>

#include <filesystem>

namespace pybox::config {

// Parses config.json's "model" object; `file` is only used in messages.
Expected<model::ModelConfig> parse_model_config(const boost::json::value& value, const std::filesystem::path& file);

}  // namespace pybox::config
