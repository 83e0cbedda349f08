// Every fixed number of PyBox in one place (docs/reference.md states them). Nothing here can be
// changed by a request; requests may only choose values inside the ranges below.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace pybox::limits {

inline constexpr std::size_t k_max_source_bytes = 65'536;
inline constexpr std::size_t k_max_output_limit_bytes = 65'536;
inline constexpr std::size_t k_min_output_limit_bytes = 1;
inline constexpr std::size_t k_default_output_limit_bytes = 65'536;

// Runs that move files (proto/files.hpp): what goes in, what comes back, and the /tmp they get.
inline constexpr std::size_t k_max_input_files = 64;
inline constexpr std::size_t k_max_input_bytes = 8 * 1024 * 1024;
inline constexpr std::size_t k_max_output_files = 64;
inline constexpr std::size_t k_max_output_bytes = 8 * 1024 * 1024;
// A file's name (a relative path, '/' between folders) is at most this many bytes.
inline constexpr std::size_t k_max_file_name_bytes = 255;
inline constexpr std::int64_t k_files_tmpfs_bytes = 64 * 1024 * 1024;

// The repair loop (`pybox repair`, POST /v1/repair): how many corrected programs it may ask the
// model for (a request chooses 1 to the most), how long the whole repair may take, and how much
// of a failed run's output goes to the model (the end of each stream, where a traceback is).
inline constexpr int k_default_repair_rounds = 3;
inline constexpr int k_max_repair_rounds = 5;
inline constexpr std::chrono::seconds k_repair_budget{600};
inline constexpr std::size_t k_repair_stderr_excerpt_bytes = 4'096;
inline constexpr std::size_t k_repair_stdout_excerpt_bytes = 1'024;

inline constexpr double k_default_timeout_s = 2.0;
inline constexpr double k_min_timeout_s = 0.1;
inline constexpr double k_max_timeout_s = 30.0;
// A request's timeout_s is kept to 1/k_timeout_steps_per_s seconds (rounded to the nearest), so
// that it reads back the same however a JSON library rounds its last digit.
inline constexpr double k_timeout_steps_per_s = 1000.0;
// The box timer (the box's first process, proto/box_policy.hpp) fires this long after the deadline.
inline constexpr double k_box_timer_margin_s = 1.0;

inline constexpr std::chrono::milliseconds k_create_timeout{5'000};
inline constexpr std::chrono::milliseconds k_min_start_timeout{2'000};
inline constexpr std::chrono::milliseconds k_inspect_timeout{2'000};
inline constexpr std::chrono::milliseconds k_query_timeout{2'000};
inline constexpr std::chrono::milliseconds k_stop_timeout{2'000};
inline constexpr std::chrono::milliseconds k_remove_timeout{3'000};
// The whole cleanup (removal and its confirmation); one retry after an interruption gets another
// budget of the same length (daemon/run/box_removal.hpp).
inline constexpr std::chrono::milliseconds k_cleanup_budget{15'000};

// Defaults of the config.json keys box_expiry_s, settle_after_expiry_s and sweep_interval_s,
// and the ranges config.json may choose from (for tests and operators).
inline constexpr std::int64_t k_box_expiry_s = 120;
inline constexpr std::int64_t k_min_box_expiry_s = 1;
inline constexpr std::int64_t k_max_box_expiry_s = 3'600;
inline constexpr std::int64_t k_settle_after_expiry_s = 60;
inline constexpr std::int64_t k_max_settle_after_expiry_s = 3'600;
inline constexpr std::int64_t k_sweep_interval_s = 30;
inline constexpr std::int64_t k_min_sweep_interval_s = 1;
inline constexpr std::int64_t k_max_sweep_interval_s = 3'600;

// Warm boxes (config.json warm_boxes): how many a daemon keeps per engine by default, and at most.
inline constexpr int k_default_warm_boxes = 1;
inline constexpr int k_max_warm_boxes = 4;
// A warm box is replaced this long before its expiry label (the longest deadline and its box
// timer margin), so a run that takes it always ends before the label says it may be swept ...
inline constexpr std::int64_t k_warm_box_renewed_before_expiry_s =
    static_cast<std::int64_t>(k_max_timeout_s + k_box_timer_margin_s);
// ... and warm boxes are kept only when a box_expiry_s leaves each at least this long to wait.
inline constexpr std::int64_t k_min_warm_box_wait_s = 5;
// A run with no warm box ready waits at most this long for the one being made for it.
inline constexpr std::chrono::milliseconds k_warm_box_longest_wait = k_create_timeout + k_min_start_timeout;
// A run that finds no warm box ready, or one that waited less than this, is taken for one of a
// series: the next warm box is begun at once, beside the run, instead of after it.
inline constexpr std::chrono::milliseconds k_warm_series_gap{1'000};
// After a warm box could not be made: the next try in 1 s, doubling to 30 s.
inline constexpr std::chrono::seconds k_warm_retry_first{1};
inline constexpr std::chrono::seconds k_warm_retry_longest{30};

// The attempt journal (<runtime>/attempts/journal.jsonl): a file is rotated to journal.1.jsonl
// before an entry would take it past this size; one older file is kept.
inline constexpr std::size_t k_journal_max_file_bytes = 1024 * 1024;
// GET /v1/attempts answers at most this many settled entries (newest first) and unsettled notes.
inline constexpr std::size_t k_attempts_answer_max_settled = 100;
inline constexpr std::size_t k_attempts_answer_max_unsettled = 100;

// The receipts the daemon keeps (<runtime>/receipts/, one file per run): at most this many and
// this many bytes of files in all; the oldest go first. GET /v1/receipts lists them all.
inline constexpr std::size_t k_max_kept_receipts = 1'000;
inline constexpr std::size_t k_max_kept_receipt_bytes = 64 * 1024 * 1024;

// The daemon's socket API.
inline constexpr std::size_t k_max_request_body_bytes = 256 * 1024;
// POST /v1/runs may carry input files: 8 MiB of them in base64, the program escaped, names.
inline constexpr std::size_t k_max_run_request_body_bytes = 12 * 1024 * 1024;
// The header; in a chunked body, each chunk-size line and the last chunk with its trailer too.
inline constexpr std::size_t k_max_request_header_bytes = 16 * 1024;
// A request must arrive whole within this of its first byte.
inline constexpr std::chrono::milliseconds k_request_read_timeout{10'000};
// A connection that has not begun a request this long after connecting or after its last
// answer is idle and closed.
inline constexpr std::chrono::milliseconds k_idle_connection_timeout{5'000};
// Open connections; at the cap the oldest idle one is closed to make room, and when none is
// idle a new connection is answered 503 too_many_connections and closed.
inline constexpr std::size_t k_max_connections = 256;

// The run queue: runs go one at a time; at most this many wait behind the running one (16
// runs at the default deadline finish well within the queue wait below) ...
inline constexpr std::size_t k_max_waiting_runs = 16;
// A system pyboxd (several users) lets one user hold at most this many of those places.
inline constexpr std::size_t k_max_waiting_runs_per_user = 8;
// ... and none waits longer than this for its turn. Past either: 503 busy, nothing ran.
inline constexpr std::chrono::milliseconds k_max_queue_wait{60'000};
// The Retry-After of a 503 busy or too_many_connections answer.
inline constexpr std::chrono::seconds k_busy_retry_after{2};

// Engine responses other than the attach stream.
inline constexpr std::size_t k_max_engine_response_bytes = 8 * 1024 * 1024;

// `pybox mcp` (client/mcp/, docs/mcp.md): the MCP server's own limits, tighter than the CLI's.
// A run_python call: the program as above; output kept per stream 1-8,192 bytes (default 4,096).
inline constexpr std::size_t k_mcp_max_output_limit_bytes = 8'192;
inline constexpr std::size_t k_mcp_default_output_limit_bytes = 4'096;
// Input files: at most this many, this many bytes in all (decoded).
inline constexpr std::size_t k_mcp_max_input_files = 16;
inline constexpr std::size_t k_mcp_max_input_bytes = 256 * 1024;
// Output files: all listed (in the receipt); their contents come back up to this many bytes in all.
inline constexpr std::size_t k_mcp_max_output_content_bytes = 48 * 1024;
// The receipt in structuredContent, serialized: at most this (output trimmed and flagged to fit).
inline constexpr std::size_t k_mcp_max_receipt_bytes = 64 * 1024;
// One incoming message (a line, without its newline) and one response line.
inline constexpr std::size_t k_mcp_max_message_bytes = 512 * 1024;
inline constexpr std::size_t k_mcp_max_response_bytes = 256 * 1024;
// Per session: tools/call requests, and messages of any kind.
inline constexpr std::size_t k_mcp_max_calls = 32;
// Live output of a run_python call with a progress token: at most this many bytes of output per
// notifications/progress message, and this many messages per call (the rest is in the result).
inline constexpr std::size_t k_mcp_max_progress_message_bytes = 4'096;
inline constexpr std::size_t k_mcp_max_progress_notifications = 256;
inline constexpr std::size_t k_mcp_max_messages = 256;
// The supervisor's budget per call: this much for deadlines up to k_mcp_budget_ceiling_s; above
// it, the daemon's worst case (2 x deadline + k_daemon_worst_case_margin) plus k_mcp_budget_extra.
inline constexpr std::chrono::milliseconds k_mcp_short_run_budget{45'000};
// Once its turn in the run queue came, the daemon answers POST /v1/runs within the sum of its
// budgets, even when every engine call takes the whole of its budget: the deadline twice (the
// start call may take the deadline, at least 2 s, then the program runs to it) plus at most this
// (the checks before create 6 s, create 5 s, verify, attach and the wait's registration 6 s, the
// exit wait's margins and draining 7 s, the 2 s the start budget may exceed the deadline, the
// final inspect 2 s, cleanup 15 s, the watcher's end 2.5 s).
inline constexpr std::chrono::milliseconds k_daemon_run_worst_case_margin{45'500};
inline constexpr double k_mcp_budget_ceiling_s = 2.0;
inline constexpr std::chrono::milliseconds k_mcp_budget_extra{5'000};

// The kernel watcher (daemon/watcher/): its sampling schedule and the bounds of its output.
// Samples per run, the first one as soon as the watcher starts.
inline constexpr int k_watch_samples = 64;
// Samples are this far apart during the first second of the run ...
inline constexpr std::chrono::milliseconds k_watch_fast_gap{50};
inline constexpr std::chrono::milliseconds k_watch_fast_phase{1'000};
// ... and the rest spread evenly up to the box timer, never closer than this. It is also the
// gap between polls of the run's cgroup in the final phase.
inline constexpr std::chrono::milliseconds k_watch_min_gap{10};
// After the exit: how long the watcher waits for the run's cgroup to hold no task.
inline constexpr std::chrono::milliseconds k_watch_final_wait{1'000};
// The watcher stops by itself this long after the deadline, and never sooner than
// k_watch_min_run after it started.
inline constexpr std::chrono::milliseconds k_watch_run_margin{4'000};
inline constexpr std::chrono::milliseconds k_watch_min_run{6'000};
// The watcher's first sample must arrive within this of the box's start.
inline constexpr std::chrono::milliseconds k_watch_ready_within{1'000};
// How long the daemon waits for the watcher to end once the box is removed (its final phase
// takes at most k_watch_final_wait plus two readings); then it is killed.
inline constexpr std::chrono::milliseconds k_watch_finish_timeout{2'500};
// Its stdout as the daemon keeps and parses it.
inline constexpr std::size_t k_watch_max_output_bytes = 64 * 1024;
inline constexpr std::size_t k_watch_max_line_bytes = 2'048;
inline constexpr std::size_t k_watch_max_lines = 256;

}  // namespace pybox::limits
