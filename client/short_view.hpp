// The client's short view of a receipt, printed after a run (`pybox exec`, `pybox receipts show`,
// `pybox mcp`): a view rendered only from the full record.
#pragma once

#include "proto/receipt.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace pybox::client {

// The most names of observed.environment the Environment line lists before "and N more"
// (docs/receipt.md, "The short view").
inline constexpr std::size_t k_environment_names_shown = 10;

// Which machine the user's folders are on, for the line that says none were shared with the box:
// "Mac folders shared" on macOS (the seed's wording: the box runs in a VM on the Mac), "Host
// folders shared" elsewhere.
enum class ViewerHost { linux_host, mac };

// The host this pybox was built for.
ViewerHost this_viewer_host();

std::string render_short_receipt(const proto::Receipt& receipt, ViewerHost host = this_viewer_host());

// The lines that follow the short view of a run whose receipt pyboxd did not keep: `why` is the
// daemon's sentence (docs/api.md "POST /v1/runs", receipt_not_kept).
std::string render_not_kept(std::string_view why);

}  // namespace pybox::client
