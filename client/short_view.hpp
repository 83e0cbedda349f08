// The client's short view of a receipt, printed after a run (`pybox exec`, `pybox receipts show`,
// `pybox mcp`): a view rendered only from the full record.
#pragma once

#include "proto/receipt.hpp"

#include <string>

namespace pybox::client {

std::string render_short_receipt(const proto::Receipt& receipt);

}  // namespace pybox::client
