#include "daemon/run/attempt_records.hpp"

#include "common/limits.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>

namespace pybox::daemon {

Expected<json::value> JournalAttemptRecords::list()
{
    auto reading = m_journal.read_recent(limits::k_attempts_answer_max_settled);
    if (!reading) return reading.error();

    auto notes = m_attempts.list();
    const std::size_t total = notes.size();
    // Newest first; RFC 3339 UTC times of one format sort as text.
    std::sort(notes.begin(), notes.end(),
              [](const AttemptNote& a, const AttemptNote& b) { return a.created_at > b.created_at; });
    if (notes.size() > limits::k_attempts_answer_max_unsettled) notes.resize(limits::k_attempts_answer_max_unsettled);
    json::array unsettled;
    for (const auto& note : notes)
        unsettled.push_back(json::object{{"run_id", note.run_id},
                                         {"created_at", note.created_at},
                                         {"expires_at", note.expires_at},
                                         {"container_id", note.container_id},
                                         {"readable", note.readable},
                                         {"in_progress", m_in_progress.contains(note.run_id)}});
    json::array settled;
    for (const auto& entry : reading->entries) settled.push_back(proto::to_json(entry));
    return json::value(json::object{{"unsettled", std::move(unsettled)},
                                    {"unsettled_total", total},
                                    {"settled", std::move(settled)},
                                    {"damaged_lines", reading->damaged_lines}});
}

}  // namespace pybox::daemon
