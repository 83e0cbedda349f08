// Fuzz target: the client reads receipts from the daemon, and users feed saved receipts back.
// Invariants: parsing never crashes; an accepted receipt round-trips exactly, gets an exit
// code in 0-255, and renders a short view without any control bytes from the input.
#include "proto/receipt.hpp"
#include "proto/short_view.hpp"

#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    boost::json::error_code ec;
    const auto document = boost::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), ec);
    if (ec) {
        return 0;
    }
    const auto receipt = pybox::proto::receipt_from_json(document);
    if (!receipt) {
        return 0;
    }
    const auto again = pybox::proto::receipt_from_json(pybox::proto::receipt_to_json(*receipt));
    if (!again || !(*again == *receipt)) {
        std::abort();
    }
    const int exit_code = pybox::proto::exit_code_for(*receipt);
    if (exit_code < 0 || exit_code > 255) {
        std::abort();
    }
    for (const char c : pybox::proto::render_short_receipt(*receipt)) {
        if (c == '\x1b' || c == '\x07' || c == '\0') {
            std::abort();
        }
    }
    return 0;
}
