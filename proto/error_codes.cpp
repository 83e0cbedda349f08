#include "proto/error_codes.hpp"

#include "common/limits.hpp"

#include <algorithm>

namespace pybox::proto {

namespace {

// 4xx: the request was wrong; 409: a state the user fixes with a command (or waits out, when
// retrying helps); 503: the daemon is full, or the engine is not there or not answering; 500: the
// daemon's own failure.
constexpr ApiErrorCode k_codes[] = {
    {"invalid_http", 400, false, "The request is not valid HTTP/1.1; the connection is closed."},
    {"invalid_json", 400, false, "The body is not one valid JSON document."},
    {"invalid_request", 400, false, "The body has an unknown or duplicate key, a wrong type or a missing value."},
    {"source_too_large", 400, false, "`source` is longer than 65,536 bytes."},
    {"input_files_invalid", 400, false, "`files.inputs` breaks a rule: a name, a duplicate, over 64 files or 8 MiB."},
    {"timeout_out_of_range", 400, false, "`timeout_s` is outside 0.1 to 30 seconds."},
    {"output_limit_out_of_range", 400, false, "`output_limit_bytes` is outside 1 to 65,536."},
    {"rounds_out_of_range", 400, false, "A repair's `rounds` is not a whole number from 1 to 5."},
    {"unknown_image", 400, false, "The request names an image PyBox has no recipe for."},
    {"image_name_invalid", 400, false, "An own image's name is outside [a-z][a-z0-9-]{0,31} or is a built-in image's."},
    {"own_recipe_invalid", 400, false, "The recipe sent to `pybox image build` is not a valid own-image recipe."},
    {"client_disconnected", 400, false, "The client went away before the run began; never written, as nobody reads it."},
    {"forbidden", 403, false,
     "The client runs as another user than pyboxd (a system pyboxd: is not root nor in the `pybox` group), or, in "
     "system mode, is not root and called an endpoint only root may call."},
    {"no_such_endpoint", 404, false, "There is no endpoint at this path."},
    {"no_such_receipt", 404, false, "The daemon keeps no receipt of this run id that the caller may see (never issued, another user's, or dropped as the oldest)."},
    {"method_not_allowed", 405, false, "The endpoint exists but not with this method."},
    {"image_not_built", 409, false, "The image has not been built yet; run `pybox setup` (or `pybox image build` for an own image)."},
    {"image_mismatch", 409, false, "The image's recipe or the engine's image differs from images.json; run `pybox setup`."},
    {"image_missing", 409, false, "The engine no longer has the image recorded in images.json; run `pybox setup`."},
    {"images_file_invalid", 409, false, "images.json is damaged; run `pybox setup`."},
    {"images_file_full", 409, false, "images.json records as many images as it may hold."},
    {"recipe_invalid", 409, false, "An image's recipe file cannot be read as a recipe."},
    {"lock_missing", 409, false, "An image has no lock file; run `pybox setup --refresh-lock`."},
    {"lock_invalid", 409, false, "An image's lock file is damaged; run `pybox setup --refresh-lock`."},
    {"lock_outdated", 409, false, "An image's lock file can no longer be installed; run `pybox setup --refresh-lock`."},
    {"package_hash_mismatch", 409, false, "A downloaded package's SHA-256 differs from the image's lock; nothing was imported."},
    {"lock_busy", 409, true, "Another process holds a lock file the daemon needs; retry when it is done."},
    {"setup_busy", 409, true, "Another `pybox setup` or image build or removal is running; retry when it is done."},
    {"engine_busy", 409, true, "Another `pybox vm start` or `stop` is in progress; retry when it is done."},
    {"engine_not_managed", 409, false, "The engine is not PyBox's private one, so PyBox does not stop it."},
    {"engine_no_such_object", 409, true, "An engine object the daemon needed was removed behind its back."},
    {"model_not_configured", 409, false, "A repair needs a model, and this pyboxd's config.json names none (docs/model.md)."},
    {"body_too_large", 413, false, "The request body is over 262,144 bytes (12,582,912 for `POST /v1/runs`); the connection is closed."},
    {"header_too_large", 431, false, "The request header is over 16,384 bytes; the connection is closed."},
    {"internal_error", 500, false, "The daemon failed in a way it has no other code for."},
    {"installation_corrupt", 500, false, "The installation id file is damaged; move it away."},
    {"file_missing", 500, false, "A file the daemon needs does not exist."},
    {"file_unreadable", 500, false, "A file the daemon needs cannot be read."},
    {"file_unwritable", 500, false, "A file or folder the daemon keeps cannot be written."},
    {"too_large", 500, false, "A file the daemon reads is larger than it may be."},
    {"io_error", 500, false, "An image tar to import cannot be read."},
    {"lock_unavailable", 500, false, "A lock file cannot be opened or locked."},
    {"spawn_failed", 500, false, "A helper program could not be started."},
    {"process_gone", 500, false, "A process the daemon tracks ended before it could be watched."},
    {"process_handle_failed", 500, false, "A process the daemon tracks cannot be opened."},
    {"image_build_failed", 500, false, "Building an image failed; the message says where."},
    {"cgroup_unknown", 500, false, "The engine does not tell which cgroup version or driver it uses."},
    {"cgroup_unsupported", 500, false, "The engine's cgroup driver is not one PyBox can place boxes under."},
    {"cgroup_busy", 500, false, "A run's cgroup is still in use when it should be empty."},
    {"cgroup_failed", 500, false, "A run's cgroup cannot be made, read or removed."},
    {"clock_unmeasured", 500, false, "The engine's clock cannot be compared with the daemon's."},
    {"watch_output_invalid", 500, false, "The resource watcher wrote output the daemon cannot read."},
    {"cancelled", 500, false, "An engine call was cancelled because the client went away; never written."},
    {"busy", 503, true, "The run queue is full, or the run waited its longest in it; nothing ran. Retry after `Retry-After` seconds."},
    {"too_many_connections", 503, true, "The daemon holds as many connections as it may and none is idle; the connection is closed."},
    {"engine_unreachable", 503, true, "The engine is not running or refuses connections; run `pybox vm start`."},
    {"engine_timeout", 503, true, "The engine did not answer in time."},
    {"engine_host_key_refused", 503, false, "An ssh engine's host offered a host key other than the one pinned in config.json; the message shows the key seen."},
    {"engine_auth_refused", 503, false, "An ssh engine's host refused the configured identity file, or PyBox refused to offer it (readable by others)."},
    {"engine_protocol", 503, false, "The engine answered with malformed HTTP or JSON, or too much of it."},
    {"engine_error", 503, false, "The engine refused a call; the message quotes it."},
    {"engine_start_failed", 503, false, "The private engine could not be started."},
    {"engine_stop_failed", 503, false, "The private engine could not be stopped."},
    {"engine_check_failed", 503, false, "The engine failed PyBox's checks."},
    {"tool_missing", 503, false, "colima or docker is in neither /opt/homebrew/bin nor /usr/local/bin (macOS; `$PATH` is never searched)."},
    {"tool_untrusted", 503, false, "colima or docker, or a folder on its way, may be changed by someone other than root or you (macOS)."},
    {"colima_too_old", 503, false, "colima is older than 0.10.0 (macOS)."},
    {"colima_failed", 503, false, "A colima command failed or timed out (macOS); the message quotes its output."},
    {"colima_output_invalid", 503, false, "colima, Lima or the VM reported something PyBox cannot read (macOS)."},
    {"host_key_pin_invalid", 503, false, "The colima VM's pinned ssh host key file is damaged (macOS)."},
    {"host_key_unpinned", 503, false, "The colima VM's ssh host key is not pinned yet; run `pybox vm start` (macOS)."},
};

}  // namespace

std::span<const ApiErrorCode> api_error_codes() { return k_codes; }

const ApiErrorCode* find_api_error_code(std::string_view code)
{
    const auto* found = std::find_if(std::begin(k_codes), std::end(k_codes),
                                     [&](const ApiErrorCode& row) { return row.code == code; });
    return found == std::end(k_codes) ? nullptr : found;
}

std::optional<std::chrono::seconds> retry_after_for(std::string_view code)
{
    if (code == "busy" || code == "too_many_connections") return limits::k_busy_retry_after;
    return std::nullopt;
}

}  // namespace pybox::proto
