#include "daemon/records/attempt_records.hpp"

#include "common/limits.hpp"

#include <algorithm>

namespace pybox::daemon {

Expected<proto::AttemptsAnswer> JournalAttemptRecords::list(std::optional<std::uint32_t> viewer)
{
    // A viewer's own runs only: a run of unknown owner (older notes and entries) is nobody's.
    auto visible = [&viewer](const std::optional<std::uint32_t>& owner) { return !viewer || owner == viewer; };
    auto reading = m_journal.read_recent(viewer ? SIZE_MAX : limits::k_attempts_answer_max_settled);
    if (!reading) return reading.error();
    std::erase_if(reading->entries, [&](const proto::SettledAttempt& entry) { return !visible(entry.owner_uid); });
    if (reading->entries.size() > limits::k_attempts_answer_max_settled)
        reading->entries.resize(limits::k_attempts_answer_max_settled);

    auto notes = m_attempts.list();
    std::erase_if(notes, [&](const AttemptNote& note) { return !visible(note.owner_uid); });
    proto::AttemptsAnswer answer;
    answer.unsettled_total = notes.size();
    // Newest first; RFC 3339 UTC times of one format sort as text.
    std::sort(notes.begin(), notes.end(),
              [](const AttemptNote& a, const AttemptNote& b) { return a.created_at > b.created_at; });
    if (notes.size() > limits::k_attempts_answer_max_unsettled) notes.resize(limits::k_attempts_answer_max_unsettled);
    for (const auto& note : notes)
        answer.unsettled.push_back({note.run_id, note.created_at, note.expires_at, note.container_id, note.readable,
                                    m_in_progress.contains(note.run_id), m_in_progress.is_warm(note.run_id),
                                    note.owner_uid});
    answer.settled = std::move(reading->entries);
    if (m_receipts != nullptr)
        for (auto& entry : answer.settled)
            if (m_receipts->holds(entry.run_id)) entry.receipt = entry.run_id;
    answer.damaged_lines = reading->damaged_lines;
    return answer;
}

}  // namespace pybox::daemon
