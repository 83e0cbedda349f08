// `pybox receipts`: the receipts pyboxd keeps (GET /v1/receipts), newest first, one line each;
// `pybox receipts show ID`: one of them (GET /v1/receipts/ID) as the short view `pybox exec`
// prints, or with --json exactly as it was issued (signature included, so `pybox verify` takes
// it).
#include "client/commands.hpp"
#include "client/short_view.hpp"

#include "proto/attempts.hpp"
#include "proto/receipt.hpp"
#include "client/short_view.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <memory>

namespace pybox::client {

namespace {

constexpr std::chrono::seconds k_receipts_timeout{10};

struct ReceiptsOptions {
    bool json = false;
    std::string run_id;
    bool show_json = false;
};

std::string padded(std::string text, std::size_t width)
{
    if (text.size() < width) text.append(width - text.size(), ' ');
    return text;
}

}  // namespace

Rendered render_receipt_list(const proto::ReceiptList& answer)
{
    if (answer.receipts.empty())
        return {"No receipts kept yet (pyboxd keeps the newest " + std::to_string(answer.max_receipts) + ").\n", 0};
    std::string text = padded("RUN ID", 34) + padded("TIME", 29) + padded("IMAGE", 12) + padded("EXIT", 6) +
                       padded("MECHANISM", 24) + "BYTES\n";
    for (const auto& kept : answer.receipts)
        text += padded(kept.run_id, 34) + padded(util::printable_excerpt(kept.created_at, 27), 29) +
                padded(util::printable_excerpt(kept.image, 10), 12) +
                padded(kept.exit_code ? std::to_string(*kept.exit_code) : "-", 6) +
                padded(util::printable_excerpt(kept.mechanism, 22), 24) + std::to_string(kept.bytes) +
                (kept.signed_receipt ? "" : "  NOT VERIFIED" + (kept.problem ? ": " + util::printable_excerpt(*kept.problem, 300) : "")) +
                "\n";
    return {text, 0};
}

Rendered render_kept_receipt(const boost::json::value& document, const std::string& run_id)
{
    auto receipt = proto::receipt_from_json(document, util::ReadMode::tolerant);
    if (!receipt) return {"pybox: the kept receipt cannot be read: " + receipt.error().message + "\n", k_exit_pybox_failed};
    if (receipt->identity.run_id != run_id)
        return {"pybox: pyboxd answered the receipt of run " + util::printable_excerpt(receipt->identity.run_id) +
                    " for run " + run_id + "; it is not shown.\n",
                k_exit_pybox_failed};
    std::string signer = "none (unsigned)";
    if (const auto* object = document.if_object())
        if (const auto* block = object->if_contains("signature"); block != nullptr && block->is_object())
            if (const auto* id = block->get_object().if_contains("key_id"); id != nullptr && id->is_string())
                signer = "key " + util::printable_excerpt(id->get_string(), 64) +
                         " (check it: pybox receipts show ID --json > r.json; pybox verify r.json)";
    return {render_short_receipt(*receipt) + "Signature\n  Signed by             " + signer + "\n", 0};
}

Action configure_receipts(CLI::App& command)
{
    auto options = std::make_shared<ReceiptsOptions>();
    command.add_flag("--json", options->json, "Print the daemon's JSON answer");
    auto* show = command.add_subcommand("show", "Print one kept receipt: the short view, or the full JSON as issued");
    show->add_option("run_id", options->run_id, "The run's id (32 hex digits, as `pybox receipts` lists it)")
        ->type_name("ID")
        ->required();
    show->add_flag("--json", options->show_json, "Print the receipt's JSON exactly as issued (for `pybox verify`)");
    return [options, show] {
        if (!show->parsed())
            return call_and_print("GET", "/v1/receipts", "", k_receipts_timeout, options->json,
                                  &proto::receipt_list_from_json, &render_receipt_list);
        if (!proto::is_run_id(options->run_id))
            return fail(make_error("invalid_run_id", "A run id is 32 lower-case hex digits, as `pybox receipts` lists it."));
        auto document = call_daemon("GET", "/v1/receipts/" + options->run_id, "", k_receipts_timeout);
        if (!document) return fail(document.error());
        if (options->show_json) {
            write_bytes(stdout, util::to_json_text(*document) + "\n");
            return 0;
        }
        return print(render_kept_receipt(*document, options->run_id));
    };
}

}  // namespace pybox::client
