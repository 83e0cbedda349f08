// make_unsealed_receipt(), alone in its own target (pybox_proto_unsealed) so that only what links
// it, the client's unsealed runner, can make a receipt whose `sealed` is false; the daemon does
// not link it.
#include "proto/receipt.hpp"

#include <utility>

namespace pybox::proto {

Receipt make_unsealed_receipt(UnsealedFacts facts)
{
    Receipt receipt;
    receipt.m_unsealed = std::move(facts);
    // No box, so no cgroup and no kernel counters: not "known" (observed.resources is null).
    receipt.unknown["final_resource_counters"] =
        "an unsealed run has no box and no cgroup, so no kernel counters were read (observed.resources is not "
        "applicable)";
    return receipt;
}

}  // namespace pybox::proto
