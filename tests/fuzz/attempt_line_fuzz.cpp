// Fuzz target: the daemon reads its attempt journal back line by line (a file on disk that a
// crash may have cut or anything may have damaged). Invariants: parsing never crashes; an
// accepted entry round-trips exactly and its line fits the journal's line bound.
#include "proto/attempts.hpp"

#include <boost/json/serialize.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto entry = pybox::proto::parse_settled_attempt(std::string_view(reinterpret_cast<const char*>(data), size));
    if (!entry) return 0;
    const std::string line = boost::json::serialize(pybox::proto::to_json(*entry));
    if (line.size() > pybox::proto::k_max_attempt_line_bytes) std::abort();
    const auto again = pybox::proto::parse_settled_attempt(line);
    if (!again || !(*again == *entry)) std::abort();
    return 0;
}
