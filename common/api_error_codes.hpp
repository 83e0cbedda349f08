// Every error code PyBox spells, as a named constant (api_error::k_<code>, whose value is the
// code): the socket API's, one per row of its table (common/api_errors.def, which
// proto/error_codes.cpp turns into statuses and docs/api.md shows), and those no answer carries
// (common/unanswered_errors.def: start-up failures, the client's own). Both files are X-macro
// tables; this header only expands them, so a code is spelled once, in its row, and every maker
// and reader of one names its constant. tests/unit/api_docs_test.cpp refuses a product source
// that writes one of these codes as a string literal.
#pragma once

namespace pybox::api_error {

#define PYBOX_API_ERROR(code, http_status, retryable, meaning) inline constexpr char k_##code[] = #code;
#include "common/api_errors.def"
#undef PYBOX_API_ERROR

#define PYBOX_UNANSWERED_ERROR(code, why) inline constexpr char k_##code[] = #code;
#include "common/unanswered_errors.def"
#undef PYBOX_UNANSWERED_ERROR

}  // namespace pybox::api_error
