// AttemptJournal: the durable record of attempts the sweep settled, runs whose end the daemon
// never confirmed (docs/reference.md, "Files PyBox creates"). One JSON line per entry
// (proto/attempts.hpp) in <runtime>/attempts/journal.jsonl, appended and fsync'd before the
// attempt's note is deleted, so a crash between the two repeats an entry rather than losing it.
//
// Bounded: an entry that would take the file past `max_file_bytes` first moves it to
// journal.1.jsonl (replacing the one there), so at most two files of that size exist. Reading
// is strict and capped: at most `max_file_bytes` of each file (the end of a larger one), every
// line read by the strict reader; damaged lines are counted, never fatal. Synchronous and
// small (one fsync'd append per settled attempt); called on the daemon's io_context.
#pragma once

#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/paths.hpp"
#include "proto/attempts.hpp"

#include <cstddef>
#include <filesystem>
#include <vector>

namespace pybox::daemon {

struct JournalReading {
    std::vector<proto::SettledAttempt> entries;  // newest first
    std::size_t damaged_lines = 0;                // lines the strict reader refused
};

class AttemptJournal {
public:
    explicit AttemptJournal(RuntimePaths paths, std::size_t max_file_bytes = limits::k_journal_max_file_bytes)
        : m_paths(std::move(paths)), m_max_file_bytes(max_file_bytes)
    {
    }

    std::filesystem::path current_file() const { return m_paths.attempts_dir() / "journal.jsonl"; }
    std::filesystem::path previous_file() const { return m_paths.attempts_dir() / "journal.1.jsonl"; }

    // Fails with "file_unwritable" (naming the file and why) when the entry is not durable.
    Expected<void> append(const proto::SettledAttempt& entry) const;
    // The newest `max_entries` entries of both files; fails only when a file exists but
    // cannot be read.
    Expected<JournalReading> read_recent(std::size_t max_entries) const;

private:
    RuntimePaths m_paths;
    std::size_t m_max_file_bytes;
};

}  // namespace pybox::daemon
