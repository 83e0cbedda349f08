// Fuzzes the reader of the kubelet's summary (daemon/kube/kubelet_summary.hpp): never a crash;
// an entry found has RFC 3339 times only; and a summary it reads, written again by Boost.JSON,
// reads the same (the reading depends on the JSON value, not on how it was spelt).
#include "common/clock.hpp"
#include "daemon/kube/kubelet_summary.hpp"
#include "tests/fuzz/fuzz_check.hpp"
#include "util/strict_json.hpp"

#include <boost/json/serialize.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

using pybox::fuzz::check;
using namespace pybox::kube;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    const SummaryPod pod{"pybox-test", "sumprobe", "cc8e8b8b-7a39-4a52-9504-2a3022449b09"};
    const auto read = container_stats(body, pod, "box");
    if (!read) return 0;
    if (*read) {
        for (const auto* time : {&(*read)->cpu_time, &(*read)->memory_time})
            if (*time) check(pybox::parse_rfc3339_ns(**time).has_value());
    }
    const auto parsed = pybox::util::parse_json_strictly(body, k_summary_depth);
    check(parsed.ok());
    const auto again = container_stats(boost::json::serialize(parsed.value), pod, "box");
    check(again && *again == *read);
    return 0;
}
