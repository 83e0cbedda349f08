// Fuzz target: the client reads receipts from the daemon (tolerant mode), and tests and users
// check saved receipts (strict mode). Invariants: parsing never crashes in either mode; what
// strict mode accepts, tolerant mode accepts as the same receipt; a strictly accepted receipt
// round-trips exactly; every accepted receipt gets an exit code in 0-255 and renders a short
// view without any control bytes from the input.
#include "client/short_view.hpp"
#include "proto/receipt.hpp"
#include "tests/fuzz/read_modes.hpp"

#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

using pybox::proto::Receipt;

void check_shown(const Receipt& receipt)
{
    const int exit_code = pybox::proto::exit_code_for(receipt);
    if (exit_code < 0 || exit_code > 255) {
        std::abort();
    }
    for (const char c : pybox::client::render_short_receipt(receipt)) {
        if (c == '\x1b' || c == '\x07' || c == '\0') {
            std::abort();
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    boost::json::error_code ec;
    const auto document = boost::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), ec);
    if (ec) {
        return 0;
    }
    const auto tolerant = pybox::fuzz::check_read_modes(document, &pybox::proto::receipt_from_json,
                                                        [](const Receipt& receipt) {
                                                            return boost::json::value(pybox::proto::receipt_to_json(receipt));
                                                        });
    if (tolerant) {
        check_shown(*tolerant);
    }
    return 0;
}
