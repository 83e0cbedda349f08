// Fuzz target: the client's readers of the daemon's answers (proto/answers.hpp), in both modes.
// Invariants: no reader crashes; what strict mode accepts, tolerant mode accepts as the same
// answer; a strictly accepted answer written back with to_json() reads back the same.
#include "proto/answers.hpp"
#include "tests/fuzz/read_modes.hpp"

#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

template <class Answer>
void check(const boost::json::value& document,
           pybox::Expected<Answer> (*read)(const boost::json::value&, pybox::util::ReadMode))
{
    pybox::fuzz::check_read_modes(document, read, [](const Answer& answer) { return pybox::proto::to_json(answer); });
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
    check(document, &pybox::proto::setup_progress_from_json);
    check(document, &pybox::proto::image_list_from_json);
    check(document, &pybox::proto::error_answer_from_json);
    check(document, &pybox::proto::attempts_answer_from_json);
    check(document, &pybox::proto::doctor_answer_from_json);
    return 0;
}
