#include "tests/hostile/hostile.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <iterator>

namespace pybox::test {

namespace json = boost::json;

std::string mechanism(const json::value& receipt)
{
    return std::string(receipt.at("observed").at("termination").at("mechanism").as_string());
}

double run_phase_s(const json::value& receipt)
{
    for (const auto& phase : receipt.at("lifecycle").at("phases").as_array())
        if (phase.at("name") == "run") return phase.at("duration_s").to_number<double>();
    FAIL("the receipt has no run phase");
    return 0;
}

bool stopped_at_deadline(const json::value& receipt)
{
    const auto how = mechanism(receipt);
    return how == "DEADLINE_KILL" || how == "CAUSE_NOT_ESTABLISHED";
}

std::filesystem::path daemon_socket()
{
    return runtime_home() / "pyboxd.sock";
}

std::string post_runs(const std::string& body, const std::string& connection)
{
    return "POST /v1/runs HTTP/1.1\r\nHost: pybox\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nConnection: " + connection + "\r\n\r\n" + body;
}

std::string error_code(const HttpAnswer& answer)
{
    INFO("answer: " << answer.head << "\n" << answer.body);
    boost::system::error_code ec;
    const auto body = json::parse(answer.body, ec);
    REQUIRE_FALSE(ec);
    REQUIRE(body.at("error").at("message").as_string().size() > 0);
    return std::string(body.at("error").at("code").as_string());
}

void check_ping_answers(const std::filesystem::path& socket)
{
    const auto reply = raw_exchange(socket, k_ping);
    const auto answers = split_answers(reply.bytes);
    REQUIRE(answers.size() == 1);
    CHECK(answers[0].status == 200);
    CHECK(json::parse(answers[0].body).at("ok") == true);
}

std::set<std::string> attempt_files(const std::filesystem::path& home)
{
    const auto dir = home / "attempts";
    if (!std::filesystem::exists(dir)) return {};
    auto warm = warm_boxes(home);
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) names.insert(entry.path().filename().string());
    const auto after = warm_boxes(home);  // a box made warm while the folder was read
    warm.insert(warm.end(), after.begin(), after.end());
    for (const auto& box : warm) names.erase(box.run_id + ".json");
    return names;
}

std::set<std::string> new_attempt_files(const std::set<std::string>& before)
{
    std::set<std::string> added;
    std::ranges::set_difference(attempt_files(), before, std::inserter(added, added.end()));
    return added;
}

}  // namespace pybox::test
