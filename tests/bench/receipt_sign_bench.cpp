// Benchmark (issue 13): what signing a receipt costs a run, in microseconds. Times, over many
// rounds, what the daemon does per run (ReceiptStore::issue): the RFC 8785 canonical form of
// the receipt plus its Ed25519 signature (proto::sign_receipt), then the kept file's text and
// its fsync'd write; and, for comparison, `pybox verify`'s check of the printed text. For a
// typical receipt (the test sample, a few bytes of output) and a large one (64 KiB on stdout
// and on stderr, the most a run keeps). Prints the median and the 95th percentile of each.
// Run by tests/bench/receipt_signing.sh; not a test (no timed assertion).
#include "common/files.hpp"
#include "common/signing_key.hpp"
#include "proto/receipt.hpp"
#include "proto/receipt_signature.hpp"
#include "tests/support/sample_receipt.hpp"
#include "util/json_writer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void report(const char* what, std::vector<double> micros)
{
    std::sort(micros.begin(), micros.end());
    std::printf("%-46s median %8.1f us   p95 %8.1f us   (%zu rounds)\n", what, micros[micros.size() / 2],
                micros[micros.size() * 95 / 100], micros.size());
}

std::vector<double> time_rounds(int rounds, const std::function<void()>& step)
{
    std::vector<double> micros;
    for (int i = 0; i < rounds; ++i) {
        const auto begun = Clock::now();
        step();
        micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - begun).count());
    }
    return micros;
}

void bench(const char* name, const pybox::proto::Receipt& sample, const pybox::SigningKey& key,
           const std::filesystem::path& folder, int rounds)
{
    const boost::json::object unsigned_receipt = pybox::proto::receipt_to_json(sample).as_object();
    boost::json::object receipt;
    const auto sign = time_rounds(rounds, [&] {
        receipt = unsigned_receipt;
        if (!pybox::proto::sign_receipt(receipt, key)) std::abort();
    });
    const std::string text = pybox::util::to_json_text(receipt);
    std::printf("%s receipt: %zu bytes as printed\n", name, text.size());
    report("  canonical form + Ed25519 signature", sign);
    report("  copy of the receipt alone (subtract)", time_rounds(rounds, [&] { receipt = unsigned_receipt; }));
    report("  kept file: text + write + fsync + rename", time_rounds(rounds, [&] {
               const auto kept = pybox::util::to_json_text(boost::json::object{{"owner_uid", 0}, {"receipt", receipt}});
               if (!pybox::write_file_atomic(folder / "bench.json", kept)) std::abort();
           }));
    report("  pybox verify's check of the text", time_rounds(rounds, [&] {
               if (!pybox::proto::verify_receipt(text, key.public_key())) std::abort();
           }));
}

}  // namespace

int main(int argc, char** argv)
{
    const int rounds = argc > 1 ? std::stoi(argv[1]) : 2000;
    const std::filesystem::path folder = argc > 2 ? argv[2] : std::filesystem::temp_directory_path();
    const auto key = pybox::SigningKey::generate().value();
    auto typical = pybox::test::sample_receipt();
    bench("typical", typical, key, folder, rounds);
    auto large = typical;
    large.capture.stdout_stream = {std::string(65'536, 'o'), 65'536};
    large.capture.stderr_stream = {std::string(65'536, 'e'), 65'536};
    bench("large", large, key, folder, std::max(rounds / 10, 50));
    std::filesystem::remove(folder / "bench.json");
    return 0;
}
