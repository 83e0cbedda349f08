#include "proto/error_codes.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"

#include <algorithm>

namespace pybox::proto {

namespace {

// 4xx: the request was wrong; 409: a state the user fixes with a command (or waits out, when
// retrying helps); 503: the daemon is full, or the engine is not there or not answering; 500: the
// daemon's own failure; 501: a part of HTTP the daemon does not implement.
constexpr ApiErrorCode k_codes[] = {
    {api_error::k_invalid_http, 400, false, "The request is not valid HTTP/1.1; the connection is closed."},
    {api_error::k_invalid_json, 400, false, "The body is not one valid JSON document."},
    {api_error::k_invalid_request, 400, false, "The body has an unknown or duplicate key, a wrong type or a missing value."},
    {api_error::k_source_too_large, 400, false, "`source` is longer than 65,536 bytes."},
    {api_error::k_input_files_invalid, 400, false, "`files.inputs` breaks a rule: a name, a duplicate, over 64 files or 8 MiB."},
    {api_error::k_timeout_out_of_range, 400, false, "`timeout_s` is outside 0.1 to 30 seconds."},
    {api_error::k_output_limit_out_of_range, 400, false, "`output_limit_bytes` is outside 1 to 65,536."},
    {api_error::k_rounds_out_of_range, 400, false, "A repair's `rounds` is not a whole number from 1 to 5."},
    {api_error::k_unknown_image, 400, false, "The request names an image PyBox has no recipe for."},
    {api_error::k_image_name_invalid, 400, false, "An own image's name is outside [a-z][a-z0-9-]{0,31} or is a built-in image's."},
    {api_error::k_own_recipe_invalid, 400, false, "The recipe sent to `pybox image build` is not a valid own-image recipe."},
    {api_error::k_client_disconnected, 400, false, "The client went away before the run began; never written, as nobody reads it."},
    {api_error::k_forbidden, 403, false,
     "The client runs as another user than pyboxd (a system pyboxd: is not root nor in the `pybox` group), or, in "
     "system mode, is not root and called an endpoint only root may call."},
    {api_error::k_no_such_endpoint, 404, false, "There is no endpoint at this path."},
    {api_error::k_no_such_receipt, 404, false, "The daemon keeps no receipt of this run id that the caller may see (never issued, issued but not kept, another user's, or dropped as the oldest)."},
    {api_error::k_method_not_allowed, 405, false, "The endpoint exists but not with this method."},
    {api_error::k_image_not_built, 409, false, "The image has not been built yet; run `pybox setup` (or `pybox image build` for an own image)."},
    {api_error::k_image_mismatch, 409, false, "The image's recipe or the engine's image differs from images.json; run `pybox setup`."},
    {api_error::k_image_missing, 409, false, "The engine no longer has the image recorded in images.json; run `pybox setup`."},
    {api_error::k_images_file_invalid, 409, false, "images.json is damaged; run `pybox setup`."},
    {api_error::k_images_file_full, 409, false, "images.json records as many images as it may hold."},
    {api_error::k_recipe_invalid, 409, false, "An image's recipe file cannot be read as a recipe."},
    {api_error::k_lock_missing, 409, false, "An image has no lock file; run `pybox setup --refresh-lock`."},
    {api_error::k_lock_invalid, 409, false, "An image's lock file is damaged; run `pybox setup --refresh-lock`."},
    {api_error::k_lock_outdated, 409, false, "An image's lock file can no longer be installed; run `pybox setup --refresh-lock`."},
    {api_error::k_package_hash_mismatch, 409, false, "A downloaded package's SHA-256 differs from the image's lock; nothing was imported."},
    {api_error::k_lock_busy, 409, true, "Another process holds a lock file the daemon needs; retry when it is done."},
    {api_error::k_setup_busy, 409, true, "Another `pybox setup` or image build or removal is running; retry when it is done."},
    {api_error::k_engine_busy, 409, true, "Another `pybox vm start` or `stop` is in progress; retry when it is done."},
    {api_error::k_engine_not_managed, 409, false, "The engine is not PyBox's private one, so PyBox does not stop it."},
    {api_error::k_engine_no_such_object, 409, true, "An engine object the daemon needed was removed behind its back."},
    {api_error::k_model_not_configured, 409, false, "A repair needs a model, and this pyboxd's config.json names none (docs/model.md)."},
    {api_error::k_receipt_not_verified, 409, false, "The kept file of this run no longer holds the receipt the daemon issued for it (its signature does not verify with this installation's key, or it is another run's); it is not served."},
    {api_error::k_body_too_large, 413, false, "The request body is over 262,144 bytes (12,582,912 for `POST /v1/runs`); the connection is closed."},
    {api_error::k_header_too_large, 431, false, "The request header is over 16,384 bytes; the connection is closed."},
    {api_error::k_internal_error, 500, false, "The daemon failed in a way it has no other code for."},
    {api_error::k_installation_corrupt, 500, false, "The installation id file is damaged; move it away."},
    {api_error::k_file_missing, 500, false, "A file the daemon needs does not exist."},
    {api_error::k_file_unreadable, 500, false, "A file the daemon needs cannot be read."},
    {api_error::k_file_unwritable, 500, false, "A file or folder the daemon keeps cannot be written."},
    {api_error::k_too_large, 500, false, "A file the daemon reads is larger than it may be."},
    {api_error::k_io_error, 500, false, "An image tar to import cannot be read."},
    {api_error::k_lock_unavailable, 500, false, "A lock file cannot be opened or locked."},
    {api_error::k_spawn_failed, 500, false, "A helper program could not be started."},
    {api_error::k_process_gone, 500, false, "A process the daemon tracks ended before it could be watched."},
    {api_error::k_process_handle_failed, 500, false, "A process the daemon tracks cannot be opened."},
    {api_error::k_image_build_failed, 500, false, "Building an image failed; the message says where."},
    {api_error::k_cgroup_unknown, 500, false, "The engine does not tell which cgroup version or driver it uses."},
    {api_error::k_cgroup_unsupported, 500, false, "The engine's cgroup driver is not one PyBox can place boxes under."},
    {api_error::k_cgroup_busy, 500, false, "A run's cgroup is still in use when it should be empty."},
    {api_error::k_cgroup_failed, 500, false, "A run's cgroup cannot be made, read or removed."},
    {api_error::k_clock_unmeasured, 500, false, "The engine's clock cannot be compared with the daemon's."},
    {api_error::k_watch_output_invalid, 500, false, "The resource watcher wrote output the daemon cannot read."},
    {api_error::k_cancelled, 500, false, "An engine call was cancelled because the client went away; never written."},
    {api_error::k_transfer_coding_unsupported, 501, false, "The request's Transfer-Encoding names a coding other than `chunked`; the connection is closed."},
    {api_error::k_busy, 503, true, "The run queue is full, or the run waited its longest in it; nothing ran. Retry after `Retry-After` seconds."},
    {api_error::k_too_many_connections, 503, true, "The daemon holds as many connections as it may and none is idle; the connection is closed."},
    {api_error::k_engine_unreachable, 503, true, "The engine is not running or refuses connections; run `pybox vm start`."},
    {api_error::k_engine_timeout, 503, true, "The engine did not answer in time."},
    {api_error::k_engine_host_key_refused, 503, false, "An ssh engine's host offered a host key other than the one pinned in config.json; the message shows the key seen."},
    {api_error::k_engine_auth_refused, 503, false, "An ssh engine's host refused the configured identity file, or PyBox refused to offer it (readable by others)."},
    {api_error::k_engine_protocol, 503, false, "The engine answered with malformed HTTP or JSON, or too much of it."},
    {api_error::k_engine_error, 503, false, "The engine refused a call; the message quotes it."},
    {api_error::k_engine_start_failed, 503, false, "The private engine could not be started."},
    {api_error::k_engine_stop_failed, 503, false, "The private engine could not be stopped."},
    {api_error::k_engine_check_failed, 503, false, "The engine failed PyBox's checks."},
    {api_error::k_tool_missing, 503, false, "colima or docker is in neither /opt/homebrew/bin nor /usr/local/bin (macOS; `$PATH` is never searched)."},
    {api_error::k_tool_untrusted, 503, false, "colima or docker, or a folder on its way, may be changed by someone other than root or you (macOS)."},
    {api_error::k_colima_too_old, 503, false, "colima is older than 0.10.0 (macOS)."},
    {api_error::k_colima_failed, 503, false, "A colima command failed or timed out (macOS); the message quotes its output."},
    {api_error::k_colima_output_invalid, 503, false, "colima, Lima or the VM reported something PyBox cannot read (macOS)."},
    {api_error::k_host_key_pin_invalid, 503, false, "The colima VM's pinned ssh host key file is damaged (macOS)."},
    {api_error::k_host_key_unpinned, 503, false, "The colima VM's ssh host key is not pinned yet; run `pybox vm start` (macOS)."},
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
    if (code == api_error::k_busy || code == api_error::k_too_many_connections) return limits::k_busy_retry_after;
    return std::nullopt;
}

}  // namespace pybox::proto
