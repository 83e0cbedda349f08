// The unsealed runner (`pybox exec --unsealed`, the MCP tool run_python_unsealed; docs/unsealed.md):
// runs a program with the host's python, in this process's child, without pyboxd or a container
// engine. Only when asked for explicitly; never a fallback for a sealed run.
//
// Blocking: returns when the program has ended (by itself, or killed at the deadline) and its
// working folder is removed, at most the deadline plus a moment (pybox mcp calls it on a thread
// of its own). Refuses (an Error, nothing ran) as root, with an interpreter that is
// not an absolute path to an executable regular file, a config.json it cannot read, or a folder
// it cannot make; a program that fails, crashes or is killed is a receipt, not an error.
#pragma once

#include "common/error.hpp"
#include "proto/receipt.hpp"

#include <cstddef>
#include <string>

namespace pybox::client::unsealed {

struct UnsealedRequest {
    std::string source;  // at most limits::k_max_source_bytes
    double timeout_s = 0;
    std::size_t output_limit_bytes = 0;
};

Expected<proto::Receipt> run_unsealed(const UnsealedRequest& request);

}  // namespace pybox::client::unsealed
