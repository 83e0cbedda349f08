// The short receipt printed after a run: a view rendered only from the full record.
#pragma once

#include "proto/receipt.hpp"

#include <string>

namespace pybox::proto {

std::string render_short_receipt(const Receipt& receipt);

}  // namespace pybox::proto
