// The channel protocol of Kubernetes' attach (and exec) websocket: each binary message is one
// channel byte and that channel's bytes. Pure, strict and bounded; the websocket itself is in
// kube_attach.hpp.
//
// Protocols (Sec-WebSocket-Protocol), best first: "v5.channel.k8s.io" (Kubernetes 1.30 and
// later), which adds a close message (channel 255, then the id of the stream to close), and
// "v4.channel.k8s.io" (1.20 to 1.29, and later), which cannot close stdin at all (measured on
// 1.20: `python3 -` never sees EOF). Channels: 0 stdin, 1 stdout, 2 stderr, 3 status (one JSON
// `Status` when the attach ends), 4 resize (not used).
//
// Server messages read: stdout and stderr bytes, the status (its bytes, decoded by
// parse_attach_status()), and the empty message on any of channels 0-3 with which the server
// opens each one. Anything else is refused: an empty message, a channel other than 0-3, bytes on
// stdin, a message longer than k_max_attach_message_bytes. Note that attach's status channel
// says Success whatever the program's exit code (measured: exit 3 gave Success), so the exit
// code comes from the Pod's status, never from here.
//
// Delivery: since v4 cannot close stdin, the program goes to a first process that reads a
// length-prefixed frame and runs it (proto/box_policy.hpp's fed_box_command and
// fed_program_frame).
#pragma once

#include "common/error.hpp"
#include "daemon/engine/box_output.hpp"
#include "proto/run_events.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::kube {

enum class AttachProtocol {
    v4,  // "v4.channel.k8s.io"
    v5,  // "v5.channel.k8s.io"
};

// "v5.channel.k8s.io, v4.channel.k8s.io": what the client offers, best first.
std::string_view offered_attach_protocols();
// The protocol the server agreed to (its Sec-WebSocket-Protocol), or nullopt for anything else.
std::optional<AttachProtocol> agreed_attach_protocol(std::string_view header);
std::string_view attach_protocol_name(AttachProtocol protocol);

// The streams as the run events name them.
using OutputStream = proto::OutputStream;

// One piece of the program's output, as it arrived: the output chunk every backend hands run/.
using OutputChunk = engine::OutputChunk;

// A server message, decoded.
struct AttachMessage {
    enum class Kind {
        opened,  // the empty message that opens a channel: nothing to do
        output,  // `chunk` holds stdout or stderr bytes
        status,  // `status_bytes` holds (part of) the status channel's JSON
    };
    Kind kind = Kind::opened;
    OutputChunk chunk{OutputStream::stdout_stream, {}};
    std::string status_bytes;
};

// One binary message of the server, or "engine_protocol" saying what is wrong with it.
Expected<AttachMessage> decode_attach_message(std::string_view message);

// The messages that carry `bytes` to stdin, each at most k_stdin_message_bytes of them (none
// for no bytes).
std::vector<std::string> stdin_messages(std::string_view bytes);
// v5's message that closes stdin; nullopt on v4, which has none.
std::optional<std::string> close_stdin_message(AttachProtocol protocol);

// The status channel's JSON: Success, or Failure with its reason and message.
struct AttachStatus {
    bool success = false;
    std::string reason;   // "" on Success; "NonZeroExitCode", "InternalError", ...
    std::string message;  // "" or the apiserver's sentence
};
// `bytes` is everything the status channel carried; "engine_protocol" when it is not a Status,
// or longer than k_max_attach_status_bytes.
Expected<AttachStatus> parse_attach_status(std::string_view bytes);

}  // namespace pybox::kube
