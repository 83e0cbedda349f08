#include "daemon/run/issuing_run.hpp"

#include <iostream>
#include <utility>

namespace pybox::daemon {

net::awaitable<Expected<proto::IssuedRunAnswer>> IssuingRunService::run(proto::ValidRunRequest request,
                                                                        std::uint32_t owner_uid,
                                                                        net::cancellation_slot cancelled,
                                                                        RunObserver* observer)
{
    auto assembled = co_await m_runs.run(std::move(request), owner_uid, cancelled, observer);
    if (!assembled) co_return assembled.error();
    Issuance issuance = m_receipts.issue(std::move(assembled->receipt), owner_uid);
    std::optional<std::string> not_kept;
    if (issuance.not_kept) {
        std::cerr << "pyboxd: " << issuance.not_kept->message << "\n";
        not_kept = issuance.not_kept->message;
    }
    co_return proto::IssuedRunAnswer{std::move(issuance.receipt), std::move(assembled->outputs), std::move(not_kept)};
}

}  // namespace pybox::daemon
