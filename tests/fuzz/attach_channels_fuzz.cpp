// Fuzzes the attach channel protocol (daemon/kube/attach_channels.hpp): the input, cut into
// messages at the lengths its first byte chooses, is decoded message by message (never a crash,
// output exactly the message's bytes after the channel byte, nothing accepted over the cap), the
// status parser reads what status messages carried, and stdin written in messages reads back as
// the input.
#include "daemon/kube/attach_channels.hpp"
#include "daemon/kube/kube_limits.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using pybox::fuzz::check;

using namespace pybox::kube;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1) return 0;
    const std::size_t piece = std::size_t{data[0]} + 1;
    const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);

    std::string status_bytes;
    for (std::size_t at = 0; at < input.size(); at += piece) {
        const std::string_view message = input.substr(at, piece);
        const auto decoded = decode_attach_message(message);
        if (!decoded) {
            check(decoded.error().code == "engine_protocol");
            continue;
        }
        check(!message.empty() && message.size() <= k_max_attach_message_bytes);
        const auto channel = static_cast<unsigned char>(message[0]);
        switch (decoded->kind) {
        case AttachMessage::Kind::opened: check(message.size() == 1 && channel <= 3); break;
        case AttachMessage::Kind::output:
            check(channel == 1 || channel == 2);
            check(decoded->chunk.bytes == message.substr(1));
            check((decoded->chunk.stream == OutputStream::stdout_stream) == (channel == 1));
            break;
        case AttachMessage::Kind::status:
            check(channel == 3 && decoded->status_bytes == message.substr(1));
            status_bytes += decoded->status_bytes;
            break;
        }
    }
    const auto status = parse_attach_status(status_bytes);
    if (status) check(status->success == status->reason.empty() || !status->success);
    (void)parse_attach_status(input);

    std::string stdin_again;
    for (const auto& message : stdin_messages(input)) {
        check(message.size() >= 2 && message.size() <= k_stdin_message_bytes + 1 && message[0] == '\0');
        stdin_again += message.substr(1);
    }
    check(stdin_again == input);
    return 0;
}
