// Fuzz target: the client's reader of a streamed run's event lines (proto/run_events.hpp), in
// both modes. Invariants: no crash; what strict mode accepts, tolerant mode accepts as the same
// event; an output event's bytes are within the bound, and written back as output events they
// read back as the same bytes.
#include "proto/run_events.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using pybox::util::ReadMode;
    using pybox::proto::RunEvent;
    const std::string_view line(reinterpret_cast<const char*>(data), size);
    auto strict = pybox::proto::parse_run_event(line, ReadMode::strict);
    auto tolerant = pybox::proto::parse_run_event(line, ReadMode::tolerant);
    if (strict) {
        if (!tolerant || tolerant->kind != strict->kind || tolerant->bytes != strict->bytes ||
            tolerant->run_id != strict->run_id || tolerant->answer != strict->answer || !(tolerant->error == strict->error))
            std::abort();
    }
    if (!tolerant || tolerant->kind != RunEvent::Kind::output) return 0;
    if (tolerant->bytes.size() > pybox::proto::k_max_event_data_bytes) std::abort();
    std::string lines;
    pybox::proto::append_output_events(lines, tolerant->stream, tolerant->bytes);
    std::string again;
    for (std::size_t start = 0, end; (end = lines.find('\n', start)) != std::string::npos; start = end + 1) {
        auto event = pybox::proto::parse_run_event(std::string_view(lines).substr(start, end - start), ReadMode::strict);
        if (!event || event->kind != RunEvent::Kind::output || event->stream != tolerant->stream) std::abort();
        again += event->bytes;
    }
    if (again != tolerant->bytes) std::abort();
    return 0;
}
