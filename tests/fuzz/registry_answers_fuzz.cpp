// Fuzzes the readers of a registry's answers and of an engine's account of a pull: the first
// byte picks the reader (an error body, an upload's Location, a pull's progress stream, an
// inspect answer of a pulled image, a pinned reference or a registry address), the rest is its
// input. What is accepted must hold: a Location becomes a printable path under /v2/, a digest
// read is a sha256 digest, a reference reads back as itself.
#include "daemon/registry/pinned_reference.hpp"
#include "daemon/registry/registry_answers.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

using pybox::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace pybox::registry;
    if (size < 1) return 0;
    const std::string input(reinterpret_cast<const char*>(data + 1), size - 1);
    switch (data[0] % 6) {
    case 0:
        (void)describe_registry_errors(input);
        break;
    case 1:
        if (const auto target = upload_target(input, "127.0.0.1:5000")) {
            check(target->starts_with("/v2/"));
            for (const char c : *target) check(c > 0x20 && c < 0x7f);
        }
        break;
    case 2:
        if (const auto progress = read_pull_progress(input); progress && progress->digest)
            check(is_sha256_digest(*progress->digest));
        break;
    case 3: {
        boost::system::error_code ec;
        const auto value = boost::json::parse(input, ec);
        if (ec) break;
        const auto reference = parse_pinned_reference("127.0.0.1:5000/pybox/stdlib@sha256:" + std::string(64, 'a')).value();
        if (const auto pulled = check_pulled_image(value, reference, "sha256:" + std::string(64, 'c')))
            check(pulled->image_id == "sha256:" + std::string(64, 'c') && pulled->reference == reference.text());
        break;
    }
    case 4:
        if (const auto reference = parse_pinned_reference(input)) {
            check(is_sha256_digest(reference->digest));
            const auto again = parse_pinned_reference(reference->text());
            check(again && *again == *reference);
        }
        break;
    default:
        if (const auto address = parse_registry_address(input)) {
            const auto again = parse_registry_address(address->host.authority() + "/" + address->prefix);
            check(again && *again == *address);
        }
        break;
    }
    return 0;
}
