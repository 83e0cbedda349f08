#include "daemon/records/kept_file.hpp"

#include "common/api_error_codes.hpp"
#include "proto/receipt_signature.hpp"
#include "util/strict_json.hpp"
#include "util/text.hpp"

#include <boost/json/object.hpp>

namespace pybox::daemon {

namespace json = boost::json;

namespace {

// A kept file is {"owner_uid", "receipt"}: two levels above the receipt's own.
constexpr std::size_t k_max_kept_depth = 66;

const json::object* object_at(const json::object& object, std::string_view key)
{
    const json::value* value = object.if_contains(key);
    return value != nullptr ? value->if_object() : nullptr;
}

std::string string_at(const json::object* object, std::string_view key)
{
    const json::value* value = object != nullptr ? object->if_contains(key) : nullptr;
    return value != nullptr && value->is_string() ? std::string(value->get_string()) : std::string();
}

// What the receipt says of itself, for the list (a receipt of any daemon version).
void read_entry(const json::object& receipt, proto::KeptReceipt& kept)
{
    const json::object* identity = object_at(receipt, "identity");
    kept.created_at = string_at(identity, "created_at");
    kept.image = string_at(identity, "image");
    const json::object* observed = object_at(receipt, "observed");
    const json::object* termination = observed != nullptr ? object_at(*observed, "termination") : nullptr;
    kept.mechanism = string_at(termination, "mechanism");
    if (const json::value* code = termination != nullptr ? termination->if_contains("exit_code") : nullptr;
        code != nullptr && code->is_int64())
        kept.exit_code = code->get_int64();
}

// Why the receipt is not the one the daemon issued for `run_id`, or nothing when it is.
std::optional<std::string> problem_of(const json::object& receipt, const std::string& run_id, std::string_view public_key)
{
    auto verified = proto::verify_receipt(receipt, public_key);
    if (!verified) return "Its signature does not verify with this installation's key (" + verified.error().code + "): " +
                          verified.error().message;
    if (verified->run_id != run_id)
        return "It is the receipt of run " + util::printable_excerpt(verified->run_id, 64) + ", not of run " + run_id +
               ": another run's receipt was put in its place.";
    return std::nullopt;
}

}  // namespace

Expected<KeptFile> read_kept_file(std::string_view text, const std::string& run_id, std::string_view public_key)
{
    auto parsed = util::parse_json_strictly(text, k_max_kept_depth);
    const json::object* document = parsed.ok() ? parsed.value.if_object() : nullptr;
    const json::object* receipt = document != nullptr ? object_at(*document, "receipt") : nullptr;
    const json::value* owner = document != nullptr ? document->if_contains("owner_uid") : nullptr;
    json::error_code owner_ec;
    const auto owner_uid = owner != nullptr ? owner->to_number<std::uint32_t>(owner_ec) : 0;
    if (receipt == nullptr || owner == nullptr || owner_ec)
        return make_error(api_error::k_file_unreadable, "The file of run " + run_id + " does not read as a kept receipt.");
    KeptFile kept;
    kept.entry.run_id = run_id;
    read_entry(*receipt, kept.entry);
    kept.entry.problem = problem_of(*receipt, run_id, public_key);
    kept.entry.signed_receipt = !kept.entry.problem;
    kept.entry.bytes = text.size();
    kept.entry.owner_uid = owner_uid;
    kept.receipt = *receipt;
    return kept;
}

}  // namespace pybox::daemon
