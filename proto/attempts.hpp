// The attempt journal's entries: one settled attempt, a run whose end the daemon did not
// confirm (it was killed, or lost the engine, mid-run) and which its sweep settled later.
// Written by the daemon (daemon/records/attempt_journal.hpp) as one JSON line each, served by
// GET /v1/attempts and shown by `pybox attempts` (docs/api.md, "Attempts").
//
// The reader is strict: exactly the keys below, of their types and within their bounds; a
// line that is anything else is damaged. Pure, no I/O.
#pragma once

#include "common/error.hpp"
#include "util/described_json.hpp"

#include <boost/describe/class.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::proto {

// What the sweep found of the run's box: the journal holds only these two; a tolerant reader
// of GET /v1/attempts (answers.hpp) keeps any other text as it was written.
inline constexpr std::string_view k_box_removed_by_sweep = "REMOVED_BY_SWEEP";  // found past its expiry, removed
inline constexpr std::string_view k_box_not_found = "NOT_FOUND";  // no box of the run was left on the engine

inline constexpr std::size_t k_max_attempt_errors = 8;
inline constexpr std::size_t k_max_attempt_error_bytes = 256;
inline constexpr std::size_t k_max_attempt_text_bytes = 128;

struct SettledAttempt {
    std::string run_id;        // 32 lower-case hex
    std::string created_at;    // RFC 3339, from the attempt note
    std::int64_t expires_at = 0;
    std::string container_id;  // empty when the create call never answered (or the note kept none)
    std::string settled_at;    // RFC 3339: when the sweep settled it
    std::string box{k_box_not_found};
    std::optional<std::string> box_removed_at;  // RFC 3339, when this daemon's sweep removed it
    bool run_parent_released = false;           // the run parent cgroup was released
    // What failed in earlier sweeps of this run before it settled (at most 8, each at most 256
    // bytes), oldest first.
    std::vector<std::string> errors;
    // The user whose run it was (from its note); absent in entries written before system mode.
    std::optional<std::uint32_t> owner_uid = std::nullopt;
    // Only in GET /v1/attempts, never in the journal: the run id of the run's receipt, when the
    // daemon keeps it (GET /v1/receipts/<run id>).
    std::optional<std::string> receipt = std::nullopt;

    friend bool operator==(const SettledAttempt&, const SettledAttempt&) = default;
};
BOOST_DESCRIBE_STRUCT(SettledAttempt, (), (run_id, created_at, expires_at, container_id, settled_at, box, box_removed_at,
                                           run_parent_released, errors, owner_uid, receipt))
inline constexpr util::JsonMemberRule k_settled_attempt_rules[] = {
    {"owner_uid", {}, util::JsonPresence::when_set},
    {"receipt", {}, util::JsonPresence::when_set},
};
inline std::span<const util::JsonMemberRule> json_member_rules(const SettledAttempt*) { return k_settled_attempt_rules; }
// For readers of GET /v1/attempts: strictly, `box` is one of the two above. (The journal's own
// reader, settled_attempt_from_json, is stricter: it bounds every value.)
void check_json(util::ObjectReader& reader, const SettledAttempt& attempt);

// The journal's line and GET /v1/attempts' entry.
boost::json::object to_json(const SettledAttempt& attempt);
// Strict: fails with "invalid_attempt" naming the first problem.
Expected<SettledAttempt> settled_attempt_from_json(const boost::json::value& value);
// One journal line (without its newline): at most k_max_attempt_line_bytes of JSON text.
inline constexpr std::size_t k_max_attempt_line_bytes = 4096;
Expected<SettledAttempt> parse_settled_attempt(std::string_view line);

// Whether `text` is a run id: 32 lower-case hex digits.
bool is_run_id(std::string_view text);

// `text` cut to at most `max_bytes` (at a UTF-8 character boundary), for the journal's bounds.
std::string bounded_text(std::string_view text, std::size_t max_bytes);

}  // namespace pybox::proto
