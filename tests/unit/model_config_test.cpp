// config.json's "model" object and the key it names: what is accepted, what is refused, and
// that the key is read only from a private file or the named variable and never quoted.
#include "common/private_file.hpp"
#include "daemon/config/daemon_config.hpp"
#include "daemon/model/model_key.hpp"
#include "tests/support/temp_runtime.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

using namespace pybox;
using namespace pybox::model;

namespace {

const std::filesystem::path k_file = "/home/u/.pybox/runtime/config.json";

std::string rejection(const std::string& model)
{
    auto config = config::parse_daemon_config(R"({"model": )" + model + "}", k_file);
    INFO(model);
    REQUIRE_FALSE(config.has_value());
    CHECK(config.error().code == "config_invalid");
    return config.error().message;
}

ModelConfig accepted(const std::string& model)
{
    auto config = config::parse_daemon_config(R"({"model": )" + model + "}", k_file);
    INFO(model);
    REQUIRE(config.has_value());
    REQUIRE(config->model.has_value());
    return *config->model;
}

void write_file(const std::filesystem::path& file, const std::string& text, std::filesystem::perms mode)
{
    std::ofstream(file, std::ios::binary) << text;
    std::filesystem::permissions(file, mode);
}

}  // namespace

TEST_CASE("Without a model key in config.json the daemon has no model")
{
    CHECK_FALSE(config::parse_daemon_config("{}", k_file).value().model.has_value());
}

TEST_CASE("A model config needs a model and one key source; the rest has defaults")
{
    const auto config = accepted(R"({"model": "meta/llama-3.3-70b-instruct", "api_key_env": "NVIDIA_API_KEY"})");
    CHECK(config.endpoint.host == "integrate.api.nvidia.com");
    CHECK(config.endpoint.target == "/v1/chat/completions");
    CHECK(config.model == "meta/llama-3.3-70b-instruct");
    CHECK(config.key == KeySource(KeyFromEnvironment{"NVIDIA_API_KEY"}));
    CHECK_FALSE(config.ca_file.has_value());
    CHECK(config.options.temperature == k_default_temperature);
    CHECK(config.options.max_tokens == k_default_max_tokens);
    CHECK(config.answer_timeout == std::chrono::seconds(k_default_answer_timeout_s));
}

TEST_CASE("Every model key is read")
{
    const auto config = accepted(R"({"base_url": "http://localhost:8000/v1", "model": "local", "api_key_file": "/etc/pybox/key",
        "ca_file": "/etc/pybox/ca.pem", "temperature": 1, "max_tokens": 512, "answer_timeout_s": 30})");
    CHECK_FALSE(config.endpoint.tls);
    CHECK(config.endpoint.port == 8000);
    CHECK(config.key == KeySource(KeyFromFile{"/etc/pybox/key"}));
    CHECK(config.ca_file == std::filesystem::path("/etc/pybox/ca.pem"));
    CHECK(config.options.temperature == 1.0);
    CHECK(config.options.max_tokens == 512);
    CHECK(config.answer_timeout == std::chrono::seconds(30));
}

TEST_CASE("A model config without a model, with no key source or with two is refused")
{
    CHECK(rejection(R"({"api_key_env": "K"})").find("\"model.model\" is required") != std::string::npos);
    CHECK(rejection(R"({"model": "m"})").find("exactly one of") != std::string::npos);
    rejection(R"({"model": "m", "api_key_env": "K", "api_key_file": "/k"})");
    rejection(R"("m")");
}

TEST_CASE("Model keys with wrong types, bad values or unknown names are refused, naming the key")
{
    const std::string key = R"("model": "m", "api_key_env": "K")";
    CHECK(rejection("{" + key + R"(, "base_url": "http://gpu.lan:8000"})").find("\"model.base_url\"") != std::string::npos);
    CHECK(rejection("{" + key + R"(, "ca_file": "ca.pem"})").find("\"model.ca_file\"") != std::string::npos);
    rejection("{" + key + R"(, "temperature": 2.5})");
    rejection("{" + key + R"(, "temperature": "hot"})");
    rejection("{" + key + R"(, "max_tokens": 0})");
    rejection("{" + key + R"(, "max_tokens": 32769})");
    rejection("{" + key + R"(, "answer_timeout_s": 0})");
    rejection("{" + key + R"(, "answer_timeout_s": 601})");
    rejection("{" + key + R"(, "answer_timeout_s": 1.5})");
    rejection(R"({"model": "has space", "api_key_env": "K"})");
    rejection(R"({"model": "m", "api_key_env": "1KEY"})");
    rejection(R"({"model": "m", "api_key_env": "A-B"})");
    rejection(R"({"model": "m", "api_key_file": "key"})");
    CHECK(rejection("{" + key + R"(, "api_key": "nvapi-x"})").find("known keys: base_url") != std::string::npos);
}

TEST_CASE("A key is one line of printable ASCII; a trailing newline is dropped")
{
    CHECK(key_from_text("nvapi-abc\n", "w").value().reveal() == "nvapi-abc");
    CHECK(key_from_text("nvapi-abc\r\n", "w").value().reveal() == "nvapi-abc");
    CHECK(key_from_text("nvapi-abc", "w").value().reveal() == "nvapi-abc");
    for (const std::string& bad : std::vector<std::string>{"", "\n", "a b", "a\nb", "a\n\n", "caf\xc3\xa9", std::string(k_max_key_bytes + 1, 'k')}) {
        auto key = key_from_text(bad, "the file /k");
        REQUIRE_FALSE(key.has_value());
        CHECK(key.error().code == "model_key_unavailable");
        if (bad.size() > 3) CHECK(key.error().message.find(bad) == std::string::npos);
    }
}

TEST_CASE("A key file readable by group or others is refused, like an ssh key")
{
    test::TempRuntime runtime;
    const auto file = runtime.root / "key";
    write_file(file, "nvapi-secret-0644\n", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                                std::filesystem::perms::group_read | std::filesystem::perms::others_read);
    auto key = load_model_key(KeyFromFile{file});
    REQUIRE_FALSE(key.has_value());
    CHECK(key.error().code == "model_key_unavailable");
    CHECK(key.error().message.find("mode 0644") != std::string::npos);
    CHECK(key.error().message.find("chmod 600") != std::string::npos);
    CHECK(key.error().message.find("nvapi-secret") == std::string::npos);
}

TEST_CASE("A 0600 key file is read; a missing one or a folder is refused")
{
    test::TempRuntime runtime;
    const auto file = runtime.root / "key";
    write_file(file, "nvapi-secret-0600\n", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    CHECK(load_model_key(KeyFromFile{file}).value().reveal() == "nvapi-secret-0600");
    CHECK(load_model_key(KeyFromFile{runtime.root / "none"}).error().message.find("does not exist") != std::string::npos);
    CHECK(load_model_key(KeyFromFile{runtime.root}).error().message.find("not a regular file") != std::string::npos);
}

TEST_CASE("A key comes from the named environment variable, and an unset one is said so")
{
    ::setenv("PYBOX_TEST_MODEL_KEY", "nvapi-from-env", 1);
    CHECK(load_model_key(KeyFromEnvironment{"PYBOX_TEST_MODEL_KEY"}).value().reveal() == "nvapi-from-env");
    ::unsetenv("PYBOX_TEST_MODEL_KEY");
    auto unset = load_model_key(KeyFromEnvironment{"PYBOX_TEST_MODEL_KEY"});
    REQUIRE_FALSE(unset.has_value());
    CHECK(unset.error().message.find("PYBOX_TEST_MODEL_KEY") != std::string::npos);
}

TEST_CASE("The private file rule names what is wrong")
{
    CHECK(private_file_problem(true, 0600, true).empty());
    CHECK(private_file_problem(true, 0400, true).empty());
    CHECK(private_file_problem(false, 0600, true) == "it is not a regular file");
    CHECK(private_file_problem(true, 0600, false) == "it belongs to another user");
    CHECK(private_file_problem(true, 0640, true).find("mode 0640") != std::string::npos);
    CHECK(private_file_problem(true, 0602, true).find("mode 0602") != std::string::npos);
}
