// Fuzz target: the client's readers of the daemon's answers (proto/answers.hpp), in both modes.
// Invariants: no reader crashes; what strict mode accepts, tolerant mode accepts as the same
// answer; a strictly accepted answer written back with to_json() reads back the same.
#include "proto/answers.hpp"

#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

using pybox::proto::ReadMode;

template <class Answer>
void check(const boost::json::value& document,
           pybox::Expected<Answer> (*read)(const boost::json::value&, ReadMode))
{
    const auto strict = read(document, ReadMode::strict);
    const auto tolerant = read(document, ReadMode::tolerant);
    if (!strict) {
        return;
    }
    if (!tolerant || !(*tolerant == *strict)) {
        std::abort();
    }
    const auto again = read(pybox::proto::to_json(*strict), ReadMode::strict);
    if (!again || !(*again == *strict)) {
        std::abort();
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
    check(document, &pybox::proto::ping_answer_from_json);
    check(document, &pybox::proto::engine_status_from_json);
    check(document, &pybox::proto::engine_start_from_json);
    check(document, &pybox::proto::engine_stop_from_json);
    check(document, &pybox::proto::setup_answer_from_json);
    check(document, &pybox::proto::image_list_from_json);
    check(document, &pybox::proto::error_answer_from_json);
    check(document, &pybox::proto::attempts_answer_from_json);
    return 0;
}
