#include "daemon/run/issuing_run.hpp"

#include <iostream>
#include <utility>

namespace pybox::daemon {

net::awaitable<Expected<proto::RunAnswer>> IssuingRunService::run(proto::ValidRunRequest request, std::uint32_t owner_uid,
                                                                  net::cancellation_slot cancelled, RunObserver* observer)
{
    auto answer = co_await m_runs.run(std::move(request), owner_uid, cancelled, observer);
    if (!answer) co_return answer;
    if (auto issued = m_receipts.issue(answer->receipt, owner_uid); !issued) {
        std::cerr << "pyboxd: " << issued.error().message << "\n";
        answer->receipt_not_kept = issued.error().message;
    }
    co_return answer;
}

}  // namespace pybox::daemon
