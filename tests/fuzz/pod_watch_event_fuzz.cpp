// Fuzzes the reader of one line of the apiserver's watch of a Pod (daemon/kube/pod_watch_event.hpp)
// and the bounded splitter its lines come through (util/bounded_lines.hpp): any bytes, as the
// apiserver might send, must never crash them, and what they give must keep their promises.
#include "daemon/kube/pod_state.hpp"
#include "daemon/kube/pod_watch_event.hpp"
#include "tests/fuzz/fuzz_check.hpp"
#include "util/bounded_lines.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using pybox::fuzz::check;
namespace kube = pybox::kube;

void check_event(std::string_view line)
{
    const auto event = kube::parse_pod_watch_event(line);
    if (!event) {
        check(event.error().code == "engine_protocol" && !event.error().message.empty());
        return;
    }
    const bool is_error = event->type == kube::WatchEventType::error;
    check(is_error == event->status.has_value());
    check(is_error == event->resource_version.empty());
    if (is_error) return;
    check(event->pod.is_object());
    const auto facts = kube::pod_facts(event->pod);
    check(facts.resource_version == event->resource_version);
    if (event->type != kube::WatchEventType::bookmark) check(!facts.uid.empty() && !facts.name.empty());
    (void)kube::shows_end(event->pod);
}

// The lines of `text` fed in pieces of `piece` bytes are its lines, none longer than the bound.
void check_lines(std::string_view text, std::size_t piece)
{
    constexpr std::size_t bound = 64;
    pybox::util::BoundedLines lines(bound);
    std::string joined;
    bool fits = true;
    for (std::size_t at = 0; at < text.size(); at += piece) {
        fits = lines.add(text.substr(at, piece)) && fits;
        while (auto line = lines.next()) {
            check(line->size() <= bound && line->find('\n') == std::string::npos);
            joined += *line + "\n";
        }
    }
    check(fits == !lines.overflowed());
    if (fits) check(text.starts_with(joined) && text.substr(joined.size()).find('\n') == std::string_view::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_event(text);
    check_lines(text, 1 + size % 7);
    return 0;
}
