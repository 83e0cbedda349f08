// Receipts as evidence (issue 13), against the real daemon and engine: a receipt `pybox exec
// --json` prints verifies with `pybox verify` on a machine that has only the installation's
// public key, a changed copy does not, and the daemon keeps what it issued.
#include "tests/integration/harness.hpp"

#include "common/files.hpp"
#include "common/ids.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

// An empty folder standing in for another machine's PyBox home, removed at the end.
struct OtherMachine {
    fs::path home = fs::temp_directory_path() / ("pybox-verifier-" + random_id_128().substr(0, 12));
    OtherMachine() { fs::create_directories(home); }
    ~OtherMachine() { fs::remove_all(home); }
    std::vector<std::pair<std::string, std::string>> env() const { return {{"PYBOX_HOME", home.string()}}; }
};

std::string write_temp(const fs::path& file, const std::string& text)
{
    REQUIRE(write_file_atomic(file, text).has_value());
    return file.string();
}

// The PEM block of `pybox key show`'s output.
std::string pem_of(const std::string& shown)
{
    const auto end_marker = std::string("-----END PUBLIC KEY-----\n");
    const auto end = shown.find(end_marker);
    REQUIRE(end != std::string::npos);
    return shown.substr(0, end + end_marker.size());
}

}  // namespace

TEST_CASE("A receipt printed by pybox exec --json verifies on a machine with only the public key")
{
    const auto run = run_pybox({"exec", "-", "--json"}, "print('evidence')\n");
    REQUIRE(run.exit_code == 0);
    const auto receipt = json::parse(run.output);
    const auto& signature = receipt.at("signature").as_object();
    CHECK(signature.at("algorithm") == "Ed25519");

    const auto shown = run_pybox({"key", "show"});
    REQUIRE(shown.exit_code == 0);
    const std::string key_id(signature.at("key_id").as_string());
    CHECK_THAT(shown.output, Catch::Contains("key id: " + key_id));

    OtherMachine verifier;
    const auto receipt_file = write_temp(verifier.home / "r.json", run.output);
    const auto key_file = write_temp(verifier.home / "pub.pem", pem_of(shown.output));
    const auto verified = run_pybox({"verify", receipt_file, "--key", key_file}, "", verifier.env());
    CHECK(verified.exit_code == 0);
    CHECK_THAT(verified.output, Catch::Contains("Verified") && Catch::Contains(key_id) &&
                                    Catch::Contains(std::string(receipt.at("identity").at("daemon_version").as_string())) &&
                                    Catch::Contains(std::string(receipt.at("identity").at("created_at").as_string())));

    // Without --key that machine trusts no key at all.
    const auto no_key = run_pybox({"verify", receipt_file}, "", verifier.env());
    CHECK(no_key.exit_code == 125);
    CHECK_THAT(no_key.error_output, Catch::Contains("--key"));
    // The installation itself trusts its own key without --key.
    CHECK(run_pybox({"verify", receipt_file}).exit_code == 0);
}

TEST_CASE("A changed copy of a receipt, or one checked against another key, does not verify")
{
    const auto run = run_pybox({"exec", "-", "--json"}, "print('unchanged')\n");
    REQUIRE(run.exit_code == 0);
    OtherMachine verifier;
    std::string changed = run.output;
    const auto at = changed.find("unchanged\\n");
    REQUIRE(at != std::string::npos);
    changed[at] = 'x';
    const auto changed_file = write_temp(verifier.home / "changed.json", changed);
    const auto failed = run_pybox({"verify", changed_file});
    CHECK(failed.exit_code == 1);
    CHECK_THAT(failed.error_output, Catch::Contains("NOT VERIFIED (signature_mismatch)"));

    // A key pair of another installation, made with OpenSSL's command line.
    const auto other_key = verifier.home / "other.pem";
    const auto other_pub = verifier.home / "other.pub.pem";
    const auto made = run_process({"/usr/bin/openssl", "genpkey", "-algorithm", "ed25519", "-out", other_key.string()});
    REQUIRE((made.has_value() && made->exit_code == 0));
    const auto exported =
        run_process({"/usr/bin/openssl", "pkey", "-in", other_key.string(), "-pubout", "-out", other_pub.string()});
    REQUIRE((exported.has_value() && exported->exit_code == 0));
    const auto original_file = write_temp(verifier.home / "r.json", run.output);
    const auto wrong = run_pybox({"verify", original_file, "--key", other_pub.string()}, "", verifier.env());
    CHECK(wrong.exit_code == 1);
    CHECK_THAT(wrong.error_output, Catch::Contains("NOT VERIFIED (wrong_key)"));

    const auto not_json = run_pybox({"verify", write_temp(verifier.home / "bad.json", "{\"x\":")});
    CHECK(not_json.exit_code == 1);
    CHECK_THAT(not_json.error_output, Catch::Contains("(not_json)"));
}

TEST_CASE("The daemon keeps the receipts it issued: pybox receipts lists them and receipts show prints one")
{
    const auto run = run_pybox({"exec", "-", "--json"}, "print('kept')\n");
    REQUIRE(run.exit_code == 0);
    const auto receipt = json::parse(run.output);
    const std::string run_id(receipt.at("identity").at("run_id").as_string());

    const auto listed = run_pybox({"receipts"});
    CHECK(listed.exit_code == 0);
    CHECK_THAT(listed.output, Catch::Contains("RUN ID") && Catch::Contains(run_id + "  ") &&
                                  Catch::Contains("TARGET_EXIT_OBSERVED"));
    const auto listed_json = json::parse(run_pybox({"receipts", "--json"}).output);
    CHECK(listed_json.at("receipts").at(0).at("run_id") == run_id.c_str());  // newest first

    const auto shown = run_pybox({"receipts", "show", run_id});
    CHECK(shown.exit_code == 0);
    CHECK_THAT(shown.output, Catch::Contains("PyBox receipt · run " + run_id.substr(0, 8)) &&
                                 Catch::Contains("Signed by"));
    const auto as_json = run_pybox({"receipts", "show", run_id, "--json"});
    CHECK(as_json.exit_code == 0);
    CHECK(json::parse(as_json.output) == receipt);
    OtherMachine verifier;
    CHECK(run_pybox({"verify", write_temp(verifier.home / "kept.json", as_json.output)}).exit_code == 0);

    const auto missing = run_pybox({"receipts", "show", std::string(32, '0')});
    CHECK(missing.exit_code == 125);
    CHECK_THAT(missing.error_output, Catch::Contains("keeps no receipt"));
}
