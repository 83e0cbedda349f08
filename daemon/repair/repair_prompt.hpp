// What the repair loop says to the model (docs/repair.md shows it): a fixed system message, then
// for each failed program a user message with the program, how its run ended and the end of its
// output, and the model's earlier programs as its own turns.
//
// The output excerpts are the last limits::k_repair_stderr_excerpt_bytes of stderr and
// limits::k_repair_stdout_excerpt_bytes of stdout, as UTF-8 (other bytes become U+FFFD): the
// program's output is untrusted text and goes to the model only as quoted data. The
// conversation is kept within k_conversation_bytes by dropping the oldest exchanges after the
// first (the original program and its failure always stay). Pure.
#pragma once

#include "daemon/model/chat_messages.hpp"
#include "proto/receipt.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::repair {

inline constexpr std::size_t k_conversation_bytes = 256 * 1024;

// Whether a run counts as a success: the program ended by itself with exit code 0.
bool run_succeeded(const proto::Receipt& receipt);

// One sentence: how the run ended ("It exited with code 1.", "It was killed at its deadline of
// 2 s.", ...).
std::string how_it_ended(const proto::Receipt& receipt);

// The conversation of one repair.
class RepairConversation {
public:
    // The system message, naming the image and deadline every run has.
    RepairConversation(std::string_view image, double timeout_s);

    // A failed run of `program` (the original, or the model's latest).
    void add_failure(std::string_view program, const proto::Receipt& receipt);
    // The model's answer, as the program it held (only programs that were then run are added).
    void add_model_program(std::string_view program);

    const std::vector<model::ModelMessage>& messages() const { return m_messages; }

private:
    void keep_within_bound();

    std::vector<model::ModelMessage> m_messages;
};

}  // namespace pybox::repair
