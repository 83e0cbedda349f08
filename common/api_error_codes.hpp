// The error codes of the socket API as named constants, one for every row of the table in
// proto/error_codes.cpp (docs/api.md, "Errors"), in its order: a code is spelled once, here,
// and every maker and reader of one names its constant. tests/unit/api_docs_test.cpp holds the
// constants to the table both ways, and refuses a product source that writes one of these codes
// as a string literal. Codes that never reach an answer (startup failures, the client's own)
// are not here.
#pragma once

namespace pybox::api_error {

inline constexpr char k_invalid_http[] = "invalid_http";
inline constexpr char k_invalid_json[] = "invalid_json";
inline constexpr char k_invalid_request[] = "invalid_request";
inline constexpr char k_source_too_large[] = "source_too_large";
inline constexpr char k_input_files_invalid[] = "input_files_invalid";
inline constexpr char k_timeout_out_of_range[] = "timeout_out_of_range";
inline constexpr char k_output_limit_out_of_range[] = "output_limit_out_of_range";
inline constexpr char k_rounds_out_of_range[] = "rounds_out_of_range";
inline constexpr char k_unknown_image[] = "unknown_image";
inline constexpr char k_image_name_invalid[] = "image_name_invalid";
inline constexpr char k_own_recipe_invalid[] = "own_recipe_invalid";
inline constexpr char k_client_disconnected[] = "client_disconnected";
inline constexpr char k_forbidden[] = "forbidden";
inline constexpr char k_no_such_endpoint[] = "no_such_endpoint";
inline constexpr char k_no_such_receipt[] = "no_such_receipt";
inline constexpr char k_method_not_allowed[] = "method_not_allowed";
inline constexpr char k_image_not_built[] = "image_not_built";
inline constexpr char k_image_mismatch[] = "image_mismatch";
inline constexpr char k_image_missing[] = "image_missing";
inline constexpr char k_images_file_invalid[] = "images_file_invalid";
inline constexpr char k_images_file_full[] = "images_file_full";
inline constexpr char k_recipe_invalid[] = "recipe_invalid";
inline constexpr char k_lock_missing[] = "lock_missing";
inline constexpr char k_lock_invalid[] = "lock_invalid";
inline constexpr char k_lock_outdated[] = "lock_outdated";
inline constexpr char k_package_hash_mismatch[] = "package_hash_mismatch";
inline constexpr char k_lock_busy[] = "lock_busy";
inline constexpr char k_setup_busy[] = "setup_busy";
inline constexpr char k_engine_busy[] = "engine_busy";
inline constexpr char k_engine_not_managed[] = "engine_not_managed";
inline constexpr char k_engine_no_such_object[] = "engine_no_such_object";
inline constexpr char k_model_not_configured[] = "model_not_configured";
inline constexpr char k_receipt_not_verified[] = "receipt_not_verified";
inline constexpr char k_body_too_large[] = "body_too_large";
inline constexpr char k_header_too_large[] = "header_too_large";
inline constexpr char k_internal_error[] = "internal_error";
inline constexpr char k_installation_corrupt[] = "installation_corrupt";
inline constexpr char k_file_missing[] = "file_missing";
inline constexpr char k_file_unreadable[] = "file_unreadable";
inline constexpr char k_file_unwritable[] = "file_unwritable";
inline constexpr char k_too_large[] = "too_large";
inline constexpr char k_io_error[] = "io_error";
inline constexpr char k_lock_unavailable[] = "lock_unavailable";
inline constexpr char k_spawn_failed[] = "spawn_failed";
inline constexpr char k_process_gone[] = "process_gone";
inline constexpr char k_process_handle_failed[] = "process_handle_failed";
inline constexpr char k_image_build_failed[] = "image_build_failed";
inline constexpr char k_cgroup_unknown[] = "cgroup_unknown";
inline constexpr char k_cgroup_unsupported[] = "cgroup_unsupported";
inline constexpr char k_cgroup_busy[] = "cgroup_busy";
inline constexpr char k_cgroup_failed[] = "cgroup_failed";
inline constexpr char k_clock_unmeasured[] = "clock_unmeasured";
inline constexpr char k_watch_output_invalid[] = "watch_output_invalid";
inline constexpr char k_cancelled[] = "cancelled";
inline constexpr char k_transfer_coding_unsupported[] = "transfer_coding_unsupported";
inline constexpr char k_busy[] = "busy";
inline constexpr char k_too_many_connections[] = "too_many_connections";
inline constexpr char k_engine_unreachable[] = "engine_unreachable";
inline constexpr char k_engine_timeout[] = "engine_timeout";
inline constexpr char k_engine_host_key_refused[] = "engine_host_key_refused";
inline constexpr char k_engine_auth_refused[] = "engine_auth_refused";
inline constexpr char k_engine_protocol[] = "engine_protocol";
inline constexpr char k_engine_error[] = "engine_error";
inline constexpr char k_engine_start_failed[] = "engine_start_failed";
inline constexpr char k_engine_stop_failed[] = "engine_stop_failed";
inline constexpr char k_engine_check_failed[] = "engine_check_failed";
inline constexpr char k_tool_missing[] = "tool_missing";
inline constexpr char k_tool_untrusted[] = "tool_untrusted";
inline constexpr char k_colima_too_old[] = "colima_too_old";
inline constexpr char k_colima_failed[] = "colima_failed";
inline constexpr char k_colima_output_invalid[] = "colima_output_invalid";
inline constexpr char k_host_key_pin_invalid[] = "host_key_pin_invalid";
inline constexpr char k_host_key_unpinned[] = "host_key_unpinned";

}  // namespace pybox::api_error
