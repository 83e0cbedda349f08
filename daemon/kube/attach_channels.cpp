#include "daemon/kube/attach_channels.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/kube/kube_limits.hpp"
#include "util/strict_json.hpp"

#include <boost/json/value.hpp>

namespace pybox::kube {

namespace {

constexpr unsigned char k_stdin_channel = 0;
constexpr unsigned char k_stdout_channel = 1;
constexpr unsigned char k_stderr_channel = 2;
constexpr unsigned char k_status_channel = 3;
constexpr unsigned char k_close_channel = 255;  // v5 only: the next byte names the stream to close
// A Status is a few levels deep.
constexpr std::size_t k_attach_status_depth = 8;

constexpr std::string_view k_v4_name = "v4.channel.k8s.io";
constexpr std::string_view k_v5_name = "v5.channel.k8s.io";

Error attach_protocol_error(const std::string& problem)
{
    return make_error(api_error::k_engine_protocol, "The attach stream of the apiserver " + problem);
}

}  // namespace

std::string_view offered_attach_protocols() { return "v5.channel.k8s.io, v4.channel.k8s.io"; }

std::optional<AttachProtocol> agreed_attach_protocol(std::string_view header)
{
    if (header == k_v5_name) return AttachProtocol::v5;
    if (header == k_v4_name) return AttachProtocol::v4;
    return std::nullopt;
}

std::string_view attach_protocol_name(AttachProtocol protocol)
{
    return protocol == AttachProtocol::v5 ? k_v5_name : k_v4_name;
}

Expected<AttachMessage> decode_attach_message(std::string_view message)
{
    if (message.empty()) return attach_protocol_error("sent an empty message (no channel byte).");
    if (message.size() > k_max_attach_message_bytes)
        return attach_protocol_error("sent a message of " + std::to_string(message.size()) + " bytes; at most " +
                                     std::to_string(k_max_attach_message_bytes) + " are read.");
    const auto channel = static_cast<unsigned char>(message.front());
    const std::string_view bytes = message.substr(1);
    AttachMessage decoded;
    if (channel > k_status_channel)
        return attach_protocol_error("sent a message on channel " + std::to_string(channel) + " (0 to 3 are read).");
    if (bytes.empty()) return decoded;  // opens the channel
    switch (channel) {
    case k_stdin_channel: return attach_protocol_error("sent bytes on the stdin channel.");
    case k_stdout_channel:
    case k_stderr_channel:
        decoded.kind = AttachMessage::Kind::output;
        decoded.chunk = {channel == k_stdout_channel ? OutputStream::stdout_stream : OutputStream::stderr_stream,
                         std::string(bytes)};
        return decoded;
    default:
        decoded.kind = AttachMessage::Kind::status;
        decoded.status_bytes = std::string(bytes);
        return decoded;
    }
}

std::vector<std::string> stdin_messages(std::string_view bytes)
{
    std::vector<std::string> messages;
    for (std::size_t at = 0; at < bytes.size(); at += k_stdin_message_bytes) {
        std::string message(1, static_cast<char>(k_stdin_channel));
        message += bytes.substr(at, k_stdin_message_bytes);
        messages.push_back(std::move(message));
    }
    return messages;
}

std::optional<std::string> close_stdin_message(AttachProtocol protocol)
{
    if (protocol != AttachProtocol::v5) return std::nullopt;
    return std::string{static_cast<char>(k_close_channel), static_cast<char>(k_stdin_channel)};
}

Expected<AttachStatus> parse_attach_status(std::string_view bytes)
{
    if (bytes.size() > k_max_attach_status_bytes)
        return attach_protocol_error("sent a status of more than " + std::to_string(k_max_attach_status_bytes) + " bytes.");
    const auto parsed = util::parse_json_strictly(bytes, k_attach_status_depth);
    const auto* object = parsed.ok() ? parsed.value.if_object() : nullptr;
    if (object == nullptr) return attach_protocol_error("sent a status that is not a JSON object.");
    const auto text = [&](std::string_view key) -> std::optional<std::string> {
        const auto* value = object->if_contains(key);
        if (value == nullptr || value->is_null()) return std::string();
        if (!value->is_string()) return std::nullopt;
        return std::string(value->get_string());
    };
    const auto status = text("status");
    const auto reason = text("reason");
    const auto message = text("message");
    if (!status || !reason || !message) return attach_protocol_error("sent a status with a field that is not a string.");
    if (*status == "Success") return AttachStatus{true, "", *message};
    if (*status == "Failure") return AttachStatus{false, *reason, *message};
    return attach_protocol_error("sent a status that is neither Success nor Failure.");
}

}  // namespace pybox::kube
