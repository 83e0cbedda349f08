// The table of config.json's keys (daemon/config/config_keys.hpp) against its readers: every key
// in it is read, a wrong type of each is refused naming the key, the defaults are the readers',
// a key not in it is refused with the table's list, and the client's own key is the table's.
#include "client/unsealed/unsealed_plan.hpp"
#include "common/limits.hpp"
#include "daemon/config/config_keys.hpp"
#include "daemon/config/daemon_config.hpp"
#include "daemon/engine/engine_entry.hpp"
#include "daemon/model/model_limits.hpp"
#include "daemon/model/model_url.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <variant>

using namespace pybox;
using namespace pybox::config;

namespace {

const std::filesystem::path k_config_file = "/home/u/.pybox/runtime/config.json";
const std::string k_any_fingerprint = "SHA256:" + std::string(43, 'A');

// A valid value of each key, as JSON text.
const std::map<std::string, std::string> k_top_values{
    {"engine_socket", R"("/run/user/1000/docker.sock")"}, {"dockerd", R"("/opt/docker/bin/dockerd")"},
    {"runtime", R"("crun")"}, {"recipes_dir", R"("/srv/recipes")"}, {"image_tar_cache_dir", R"("/var/cache/pybox")"},
    {"stdlib_image", R"("127.0.0.1:5000/pybox/stdlib@sha256:)" + std::string(64, 'a') + R"(")"},
    {"watcher", "false"}, {"watcher_script", R"("/srv/watch.sh")"}, {"box_expiry_s", "60"},
    {"settle_after_expiry_s", "0"}, {"sweep_interval_s", "5"}, {"warm_boxes", "0"},
    {"engines", R"([{"id": "e2", "url": "unix:///run/e2.sock"}])"}, {"local_engine", "true"},
    {"model", R"({"model": "m", "api_key_env": "KEY"})"}, {"unsealed_python", R"("/usr/bin/python3")"}};
const std::map<std::string, std::string> k_model_values{
    {"base_url", R"("https://models.example.org")"}, {"model", R"("meta/llama")"}, {"api_key_env", R"("KEY")"},
    {"api_key_file", R"("/home/u/key")"}, {"ca_file", R"("/etc/ca.pem")"}, {"temperature", "0.5"},
    {"max_tokens", "100"}, {"answer_timeout_s", "30"}};
const std::map<std::string, std::string> k_engine_values{
    {"id", R"("e2")"}, {"kind", R"("docker")"}, {"url", R"("unix:///run/e3.sock")"}, {"engine_socket", R"("/run/docker.sock")"},
    {"identity_file", R"("/home/u/.ssh/id")"}, {"known_hosts", R"("/home/u/known_hosts")"},
    {"host_key", "\"" + k_any_fingerprint + "\""}, {"kubeconfig", R"("/home/u/.kube/config")"}, {"context", R"("admin@lab")"},
    {"namespace", R"("pybox")"}, {"image_registry", R"("127.0.0.1:5000/pybox")"}, {"max_runs", "4"},
    {"pids_limit", R"("node")"},
    {"node", R"("pybox-k8s-node")"}};
// The keys of a kubernetes entry; the others beside id and kind are a docker entry's.
const std::set<std::string> k_kube_keys{"kubeconfig", "context",    "namespace", "image_registry",
                                        "max_runs",   "pids_limit", "node"};

// A whole config.json with `key` set to `value` in `section`, every other key it needs valid.
std::string config_with(std::string_view section, const std::string& key, const std::string& value)
{
    if (section == k_top_section) return "{\"" + key + "\": " + value + "}";
    if (section == k_model_section) {
        std::map<std::string, std::string> model{{"model", R"("m")"}, {"api_key_env", R"("KEY")"}};
        if (key == "api_key_file") model.erase("api_key_env");
        model[key] = value;
        std::string text;
        for (const auto& [name, item] : model) text += (text.empty() ? "" : ", ") + ("\"" + name + "\": " + item);
        return R"({"model": {)" + text + "}}";
    }
    std::map<std::string, std::string> entry{{"id", R"("e2")"}, {"url", R"("unix:///run/e2.sock")"}};
    if (k_kube_keys.contains(key)) {
        entry = {{"id", R"("e2")"}, {"kind", R"("kubernetes")"}, {"kubeconfig", R"("/home/u/.kube/config")"},
                 {"namespace", R"("pybox")"}, {"image_registry", R"("127.0.0.1:5000/pybox")"}};
    } else if (key != "id" && key != "url") {
        entry = {{"id", R"("e2")"}, {"url", R"("ssh://u@build.example.org")"},
                 {"engine_socket", R"("/run/docker.sock")"}, {"identity_file", R"("/home/u/.ssh/id")"}};
        if (key != "host_key") entry["known_hosts"] = R"("/home/u/known_hosts")";
    }
    entry[key] = value;
    std::string text;
    for (const auto& [name, item] : entry) text += (text.empty() ? "" : ", ") + ("\"" + name + "\": " + item);
    return R"({"engines": [{)" + text + "}]}";
}

const std::string& valid_value(const ConfigKey& key)
{
    const auto& values = key.section == k_top_section ? k_top_values
                         : key.section == k_model_section ? k_model_values
                                                          : k_engine_values;
    const auto found = values.find(std::string(key.name));
    REQUIRE(found != values.end());
    return found->second;
}

// A JSON value of another type than `type`.
std::string wrong_value(KeyType type)
{
    switch (type) {
    case KeyType::path:
    case KeyType::text: return "7";
    case KeyType::boolean:
    case KeyType::whole_number:
    case KeyType::number:
    case KeyType::array: return R"("x")";
    case KeyType::object: return "[]";
    }
    return "null";
}

}  // namespace

TEST_CASE("The table names each key once per section, in the three sections config.json has")
{
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& key : config_keys()) {
        INFO(key.section << "." << key.name);
        CHECK((key.section == k_top_section || key.section == k_model_section || key.section == k_engines_section));
        CHECK(seen.emplace(key.section, key.name).second);
        CHECK_FALSE(key.default_value.empty());
        CHECK_FALSE(key.meaning.empty());
        CHECK(find_config_key(key.section, key.name) == &key);
    }
    CHECK(find_config_key(k_top_section, "no_such_key") == nullptr);
    CHECK(find_config_key(k_model_section, "dockerd") == nullptr);
}

TEST_CASE("Every key in the table is read, with a valid value, in its section")
{
    for (const auto& key : config_keys()) {
        const auto text = config_with(key.section, std::string(key.name), valid_value(key));
        INFO(text);
        const auto config = parse_daemon_config(text, k_config_file);
        CHECK(config.has_value());
    }
}

TEST_CASE("A value of the wrong type is refused for every key in the table, naming the key")
{
    for (const auto& key : config_keys()) {
        const auto text = config_with(key.section, std::string(key.name), wrong_value(key.type));
        INFO(text);
        const auto config = parse_daemon_config(text, k_config_file);
        REQUIRE_FALSE(config.has_value());
        CHECK(config.error().code == "config_invalid");
        CHECK_THAT(config.error().message, Catch::Contains(std::string(key.name)) && Catch::Contains(k_config_file.string()));
    }
}

TEST_CASE("A key not in the table is refused in every section, with the section's keys from the table")
{
    const auto top = parse_daemon_config(R"({"no_such_key": 1})", k_config_file);
    REQUIRE_FALSE(top.has_value());
    CHECK(top.error().code == "config_invalid");
    CHECK(top.error().message == k_config_file.string() + ": key \"no_such_key\" is not known (known keys: " +
                                     known_keys(k_top_section) + ").");
    const auto model = parse_daemon_config(R"({"model": {"no_such_key": 1}})", k_config_file);
    REQUIRE_FALSE(model.has_value());
    CHECK(model.error().message == k_config_file.string() + ": key \"model.no_such_key\" is not known (known keys: " +
                                       known_keys(k_model_section) + ").");
    const auto engines = parse_daemon_config(R"({"engines": [{"id": "e2", "no_such_key": 1}]})", k_config_file);
    REQUIRE_FALSE(engines.has_value());
    CHECK(engines.error().message == k_config_file.string() + ": engines[0] has an unknown key \"no_such_key\" (known keys: " +
                                         known_keys(k_engines_section) + ").");
    CHECK(known_keys(k_engines_section) == "id, kind, url, engine_socket, identity_file, known_hosts, host_key, kubeconfig, "
                                           "context, namespace, image_registry, max_runs, pids_limit, node");
}

TEST_CASE("The table's defaults are what the readers give when a key is absent")
{
    const auto defaults = parse_daemon_config("{}", k_config_file);
    REQUIRE(defaults.has_value());
    const auto default_of = [](std::string_view section, std::string_view name) {
        const auto* key = find_config_key(section, name);
        REQUIRE(key != nullptr);
        return std::string(key->default_value);
    };
    CHECK(default_of(k_top_section, "dockerd") == defaults->dockerd.string());
    CHECK(default_of(k_top_section, "runtime") == defaults->runtime);
    CHECK(default_of(k_top_section, "watcher") == (defaults->watcher ? "true" : "false"));
    CHECK(default_of(k_top_section, "local_engine") == (defaults->local_engine ? "true" : "false"));
    CHECK(default_of(k_top_section, "box_expiry_s") == std::to_string(defaults->box_expiry_s));
    CHECK(default_of(k_top_section, "settle_after_expiry_s") == std::to_string(defaults->settle_after_expiry_s));
    CHECK(default_of(k_top_section, "sweep_interval_s") == std::to_string(defaults->sweep_interval_s));
    CHECK(default_of(k_top_section, "warm_boxes") == std::to_string(defaults->warm_boxes));
    CHECK(defaults->engines.empty());
    CHECK(default_of(k_top_section, "engines") == "[]");
    for (const char* absent : {"engine_socket", "recipes_dir", "image_tar_cache_dir", "watcher_script", "model"})
        CHECK(default_of(k_top_section, absent) == "none");
    CHECK_FALSE(defaults->engine_socket);
    CHECK_FALSE(defaults->recipes_dir);
    CHECK_FALSE(defaults->image_tar_cache_dir);
    CHECK_FALSE(defaults->watcher_script);
    CHECK_FALSE(defaults->model);

    const auto model = parse_daemon_config(R"({"model": {"model": "m", "api_key_env": "KEY"}})", k_config_file);
    REQUIRE(model.has_value());
    REQUIRE(model->model.has_value());
    CHECK(default_of(k_model_section, "base_url") == std::string(model::k_default_base_url));
    CHECK(default_of(k_model_section, "temperature") == "0.2");
    CHECK(model->model->options.temperature == model::k_default_temperature);
    CHECK(default_of(k_model_section, "max_tokens") == std::to_string(model->model->options.max_tokens));
    CHECK(default_of(k_model_section, "answer_timeout_s") == std::to_string(model->model->answer_timeout.count()));
    CHECK_FALSE(model->model->ca_file);

    const auto cluster = parse_daemon_config(config_with(k_engines_section, "namespace", R"("pybox")"), k_config_file);
    REQUIRE(cluster.has_value());
    const auto& kube = std::get<engine::KubeEngine>(cluster->engines.at(0).where);
    CHECK(default_of(k_engines_section, "max_runs") == std::to_string(kube.max_runs));
    CHECK(default_of(k_engines_section, "kind") == engine::engine_kind_name(engine::EngineKind::docker));
    CHECK_FALSE(kube.context);
    CHECK_FALSE(kube.pids_limit_node);
}

TEST_CASE("The client's own key, unsealed_python, is the table's, with the table's default")
{
    const auto* key = find_config_key(k_top_section, client::unsealed::k_python_key);
    REQUIRE(key != nullptr);
    CHECK(key->type == KeyType::path);
    CHECK(key->default_value == client::unsealed::k_default_python);
}
