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
    return receipt;
}

}  // namespace pybox::proto
