// Fuzzes the reader of the kernel's proc connector datagrams and the log of process ends it
// feeds: any bytes parse without reading past them, every event keeps the parser's promises, and
// a log fed them keeps its bounds and finds a followed box's ends only among them.
#include "daemon/watcher/proc_events.hpp"
#include "daemon/watcher/process_end_log.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <variant>

using pybox::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto bytes = std::as_bytes(std::span(data, size));
    const auto events = pybox::watcher::parse_proc_events(bytes);
    // Each event takes at least a netlink header, a connector header and an event's fixed part.
    check(events.size() * (16 + 20 + 20) <= size);
    pybox::watcher::ProcessEndLog log;
    std::optional<std::int64_t> followed;
    for (const auto& event : events) {
        if (const auto* exit = std::get_if<pybox::watcher::ProcExit>(&event)) {
            check(exit->exited() == (exit->signal() == 0));
            check(exit->exit_code() >= 0 && exit->exit_code() <= 255 && exit->signal() <= 127);
            check(exit->pid >= 0);
        } else if (const auto* fork = std::get_if<pybox::watcher::ProcFork>(&event)) {
            check(fork->parent >= 0 && fork->child >= 0);
            if (!followed) {
                followed = fork->parent;
                log.follow(*followed, 0);
            }
        }
        log.record(event);
    }
    if (followed) {
        const auto ends = log.take(*followed);
        check(!ends.program || ends.program_pid == ends.program->pid);
        check(!ends.first || ends.first->pid == *followed);
    }
    check(log.followed_count() == 0);
    return 0;
}
