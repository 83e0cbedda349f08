#include "tests/integration/harness.hpp"

#include "common/files.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <sstream>

namespace pybox::test {

namespace json = boost::json;

std::filesystem::path runtime_home()
{
    const char* home = std::getenv("PYBOX_HOME");
    REQUIRE(home != nullptr);
    return home;
}

Expected<ProcessResult> try_run_pybox(const std::vector<std::string>& args, const std::string& input,
                                      const std::vector<std::pair<std::string, std::string>>& env)
{
    std::vector<std::string> argv{PYBOX_CLIENT_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessOptions options;
    options.input = input;
    options.separate_stderr = true;
    options.timeout = std::chrono::milliseconds(120'000);
    options.max_output = 8 << 20;
    for (const auto& [name, value] : env) options.env[name] = value;
    return run_process(argv, options);
}

ProcessResult run_pybox(const std::vector<std::string>& args, const std::string& input,
                        const std::vector<std::pair<std::string, std::string>>& env)
{
    auto result = try_run_pybox(args, input, env);
    REQUIRE(result.has_value());
    return *result;
}

JsonRun run_json(const std::string& program, const std::vector<std::string>& extra)
{
    std::vector<std::string> args{"exec", "-", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    JsonRun run{run_pybox(args, program), nullptr};
    INFO("stderr: " << run.process.error_output);
    boost::system::error_code ec;
    run.receipt = json::parse(run.process.output, ec);
    REQUIRE_FALSE(ec);
    REQUIRE(run.receipt.is_object());
    return run;
}

std::vector<std::string> labelled_boxes()
{
    auto installation = read_file_capped(runtime_home() / "installation.json", 4096);
    REQUIRE(installation.has_value());
    const std::string owner(json::parse(*installation).at("installation_id").as_string());
    auto listed = run_process({"/usr/bin/docker", "-H", "unix://" + (runtime_home() / "engine" / "docker.sock").string(),
                               "ps", "-aq", "--no-trunc", "--filter", "label=pybox.owner=" + owner});
    REQUIRE(listed.has_value());
    REQUIRE(listed->exit_code == 0);
    std::vector<std::string> ids;
    std::istringstream lines(listed->output);
    for (std::string line; std::getline(lines, line);)
        if (!line.empty()) ids.push_back(line);
    return ids;
}

}  // namespace pybox::test
