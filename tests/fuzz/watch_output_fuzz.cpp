// Fuzzes the kernel watcher's output parser and the resource summary two ways: the raw input as
// watcher output (must never crash; an accepted record must keep the parser's promises and
// summarize to a known status), and a well-formed output built from the input (must be accepted
// exactly as built).
#include "common/limits.hpp"
#include "daemon/watcher/resource_summary.hpp"
#include "daemon/watcher/watch_output.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using pybox::watcher::CgroupVersion;
using pybox::watcher::WatchRecord;

using pybox::fuzz::check;

void check_summary(const pybox::Expected<WatchRecord>& parsed, CgroupVersion version)
{
    const auto summary = pybox::watcher::summarize_resources(parsed, version);
    const auto& status = summary.resources.at("status");
    check(status == "COLLECTED" || status == "UNKNOWN" || status == "UNREADABLE");
    check(parsed.has_value() == (status != "UNREADABLE"));
}

void check_record(const WatchRecord& record, CgroupVersion version)
{
    check(record.version == version);
    const auto keys = pybox::watcher::watch_keys(version).size();
    std::int64_t last = record.start_cs;
    for (const auto& sample : record.samples) {
        check(sample.time_cs >= last);
        last = sample.time_cs;
        check(sample.gone ? sample.values.empty() : sample.values.size() == keys);
    }
    check(record.final_box.has_value() == record.final_parent.has_value());
    check(record.final_box.has_value() == (record.end == pybox::watcher::WatchEnd::final));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1) {
        return 0;
    }
    const auto version = data[0] % 2 == 0 ? CgroupVersion::v1 : CgroupVersion::v2;
    const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);

    const auto raw = pybox::watcher::parse_watch_output(input, version);
    if (raw) check_record(*raw, version);
    check_summary(raw, version);

    // Well-formed: each of the first k_watch_samples input bytes b is one sample, gone when
    // b % 5 == 0, else every key with the value b * index (unreadable when (b + index) % 7 == 0);
    // time advances by b % 4. A first byte above 127 adds final readings.
    std::string text = "pybox-watch 1 cgroup=" + std::to_string(static_cast<int>(version)) + " start=0\n";
    std::int64_t time = 0;
    std::size_t samples = 0;
    for (const char c : input.substr(0, pybox::limits::k_watch_samples)) {
        const auto b = static_cast<unsigned char>(c);
        time += b % 4;
        text += "sample " + std::to_string(time) + " box";
        if (b % 5 == 0) {
            text += " gone";
        } else {
            std::size_t index = 0;
            for (const auto key : pybox::watcher::watch_keys(version)) {
                ++index;
                text += " " + std::string(key) + "=" +
                        ((b + index) % 7 == 0 ? std::string("-") : std::to_string(b * index));
            }
        }
        text += "\n";
        ++samples;
    }
    const bool with_finals = data[0] > 127;
    if (with_finals) text += "final " + std::to_string(time) + " box gone\nfinal " + std::to_string(time) +
                             " parent gone\nend final\n";
    const auto valid = pybox::watcher::parse_watch_output(text, version);
    check(valid.has_value() == (text.size() <= pybox::limits::k_watch_max_output_bytes));
    if (valid) {
        check_record(*valid, version);
        check(valid->samples.size() == samples);
        check(valid->final_box.has_value() == with_finals);
    }
    check_summary(valid, version);
    return 0;
}
