#include "daemon/kube/cluster_probe.hpp"

#include "daemon/kube/kube_status.hpp"

#include <utility>

namespace pybox::kube {

net::awaitable<ClusterReport> check_cluster(KubeClient& client, std::string namespace_name, Timeout timeout)
{
    ClusterReport report;
    auto version_answer = co_await client.call_json(http::verb::get, "/version", nullptr, timeout);
    if (!version_answer) {
        report.problems.push_back({"apiserver", version_answer.error().message});
        co_return report;
    }
    auto version = parse_server_version(*version_answer);
    if (!version) {
        report.problems.push_back({"apiserver", version.error().message});
        co_return report;
    }
    report.version = *version;
    if (auto problem = version_problem(*version)) report.problems.push_back(std::move(*problem));

    auto namespace_answer =
        co_await client.call(http::verb::get, "/api/v1/namespaces/" + namespace_name, nullptr, timeout);
    if (!namespace_answer) {
        report.problems.push_back({"apiserver", namespace_answer.error().message});
        co_return report;
    }
    if (auto problem = namespace_problem(namespace_name, namespace_answer->status, namespace_answer->body))
        report.problems.push_back(std::move(*problem));

    for (const auto& need : backend_access_needs()) {
        const auto review = access_review(need, namespace_name);
        auto answer = co_await client.call_json(http::verb::post, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                                                &review, timeout);
        if (!answer) {
            report.problems.push_back({"apiserver", answer.error().message});
            co_return report;
        }
        auto decision = parse_access_review(*answer);
        if (!decision) {
            report.problems.push_back({"apiserver", decision.error().message});
            co_return report;
        }
        if (auto problem = access_problem(need, namespace_name, client.access().user, *decision))
            report.problems.push_back(std::move(*problem));
    }
    co_return report;
}

net::awaitable<Expected<std::optional<std::int64_t>>> read_pod_pids_limit(KubeClient& client, std::string node,
                                                                         Timeout timeout)
{
    auto reply = co_await client.call(http::verb::get, "/api/v1/nodes/" + node + "/proxy/configz", nullptr, timeout);
    if (!reply) co_return reply.error();
    if (reply->status / 100 != 2) co_return status_error(reply->what, reply->status, reply->body);
    co_return parse_pod_pids_limit(reply->body);
}

}  // namespace pybox::kube
