#include "daemon/watcher/watch_output.hpp"

#include "common/limits.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>

using namespace pybox;
using watcher::CgroupVersion;
using watcher::WatchEnd;

namespace {

// " key=value" for every key of the version: 7 unless overridden.
std::string values(CgroupVersion version, const std::map<std::string, std::string>& overrides = {})
{
    std::string text;
    for (const auto key : watcher::watch_keys(version)) {
        const auto found = overrides.find(std::string(key));
        text += " " + std::string(key) + "=" + (found == overrides.end() ? "7" : found->second);
    }
    return text;
}

std::string header(CgroupVersion version = CgroupVersion::v1)
{
    return "pybox-watch 1 cgroup=" + std::to_string(static_cast<int>(version)) + " start=100\n";
}

std::string complete_v1()
{
    return header() + "sample 100 box" + values(CgroupVersion::v1) + "\n" + "sample 105 box" +
           values(CgroupVersion::v1, {{"pids.current", "2"}}) + "\n" + "final 130 box gone\n" +
           "final 130 parent" + values(CgroupVersion::v1, {{"pids.current", "0"}}) + "\n" + "end final\n";
}

std::string error_of(const std::string& text, CgroupVersion version = CgroupVersion::v1)
{
    const auto parsed = watcher::parse_watch_output(text, version);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == "watch_output_invalid");
    return parsed.error().message;
}

}  // namespace

TEST_CASE("A complete v1 output parses into samples, final readings and the end reason")
{
    const auto parsed = watcher::parse_watch_output(complete_v1(), CgroupVersion::v1);
    REQUIRE(parsed.has_value());
    CHECK(parsed->version == CgroupVersion::v1);
    CHECK(parsed->start_cs == 100);
    REQUIRE(parsed->samples.size() == 2);
    CHECK(parsed->samples[1].time_cs == 105);
    CHECK(parsed->samples[1].value("pids.current") == 2);
    CHECK(parsed->samples[1].values.size() == watcher::watch_keys(CgroupVersion::v1).size());
    REQUIRE(parsed->final_box);
    CHECK(parsed->final_box->gone);
    REQUIRE(parsed->final_parent);
    CHECK(parsed->final_parent->value("pids.current") == 0);
    CHECK(parsed->end == WatchEnd::final);
}

TEST_CASE("A v2 output is read with the v2 keys")
{
    const auto text = header(CgroupVersion::v2) + "sample 100 box" +
                      values(CgroupVersion::v2, {{"cpu.stat.usage_usec", "123456"}}) + "\nend time\n";
    const auto parsed = watcher::parse_watch_output(text, CgroupVersion::v2);
    REQUIRE(parsed.has_value());
    CHECK(parsed->samples.at(0).value("cpu.stat.usage_usec") == 123456);
    CHECK(parsed->end == WatchEnd::time);
}

TEST_CASE("A value the watcher could not read is kept as unreadable, not dropped")
{
    const auto text = header() + "sample 100 box" + values(CgroupVersion::v1, {{"memory.memsw.usage_in_bytes", "-"}}) + "\n";
    const auto parsed = watcher::parse_watch_output(text, CgroupVersion::v1);
    REQUIRE(parsed.has_value());
    const auto& sample = parsed->samples.at(0);
    REQUIRE(sample.values.contains("memory.memsw.usage_in_bytes"));
    CHECK_FALSE(sample.values.at("memory.memsw.usage_in_bytes").has_value());
}

TEST_CASE("A gone box reading carries no values")
{
    const auto parsed = watcher::parse_watch_output(header() + "sample 100 box gone\n", CgroupVersion::v1);
    REQUIRE(parsed.has_value());
    CHECK(parsed->samples.at(0).gone);
    CHECK(parsed->samples.at(0).values.empty());
}

TEST_CASE("Output that stops after a complete line parses without an end reason")
{
    const auto parsed = watcher::parse_watch_output(header() + "sample 100 box gone\n", CgroupVersion::v1);
    REQUIRE(parsed.has_value());
    CHECK_FALSE(parsed->end.has_value());
}

TEST_CASE("The largest 64-bit count is accepted and one more is refused")
{
    const auto line = [](const std::string& value) {
        return header() + "sample 100 box" + values(CgroupVersion::v1, {{"cpuacct.usage", value}}) + "\n";
    };
    const auto parsed = watcher::parse_watch_output(line("9223372036854775807"), CgroupVersion::v1);
    REQUIRE(parsed.has_value());
    CHECK(parsed->samples.at(0).value("cpuacct.usage") == INT64_MAX);
    CHECK_THAT(error_of(line("9223372036854775808")), Catch::Contains("line 2") && Catch::Contains("not a count"));
}

TEST_CASE("Empty output is refused for want of a header")
{
    CHECK_THAT(error_of(""), Catch::Contains("line 1") && Catch::Contains("no header"));
}

TEST_CASE("A first line that is not the watcher's header is refused")
{
    CHECK_THAT(error_of("sample 100 box gone\n"), Catch::Contains("line 1") && Catch::Contains("header"));
}

TEST_CASE("Another output format version is refused")
{
    CHECK_THAT(error_of("pybox-watch 2 cgroup=1 start=1\n"), Catch::Contains("format version"));
}

TEST_CASE("A header for another cgroup version than the watcher was started for is refused")
{
    CHECK_THAT(error_of(header(CgroupVersion::v2)), Catch::Contains("cgroup=1"));
}

TEST_CASE("A key of the other cgroup version is refused naming the line")
{
    const auto text = header() + "sample 100 box" + values(CgroupVersion::v1) + " memory.current=5\n";
    CHECK_THAT(error_of(text), Catch::Contains("line 2") && Catch::Contains("unknown key \"memory.current\""));
}

TEST_CASE("A duplicate key is refused")
{
    const auto text = header() + "sample 100 box" + values(CgroupVersion::v1) + " pids.current=1\n";
    CHECK_THAT(error_of(text), Catch::Contains("duplicate key pids.current"));
}

TEST_CASE("A reading without every key of its version is refused")
{
    const auto text = header() + "sample 100 box pids.current=1\n";
    CHECK_THAT(error_of(text), Catch::Contains("missing key"));
}

TEST_CASE("Negative and non-numeric values are refused")
{
    for (const std::string value : {"-1", "1.5", "max", "0x10", ""}) {
        const auto text = header() + "sample 100 box" + values(CgroupVersion::v1, {{"pids.peak", value}}) + "\n";
        CHECK_THAT(error_of(text), Catch::Contains("pids.peak"));
    }
}

TEST_CASE("A time that goes backwards is refused")
{
    const auto text = header() + "sample 120 box gone\nsample 110 box gone\n";
    CHECK_THAT(error_of(text), Catch::Contains("line 3") && Catch::Contains("backwards"));
}

TEST_CASE("A sample taken before the watcher's start is refused")
{
    CHECK_THAT(error_of(header() + "sample 99 box gone\n"), Catch::Contains("backwards"));
}

TEST_CASE("A line after the end line is refused")
{
    CHECK_THAT(error_of(header() + "end time\nsample 200 box gone\n"), Catch::Contains("after the end line"));
}

TEST_CASE("End final without both final readings is refused")
{
    CHECK_THAT(error_of(header() + "final 120 box gone\nend final\n"), Catch::Contains("both final readings"));
}

TEST_CASE("Final readings with an end reason other than final are refused")
{
    const auto text = header() + "final 120 box gone\nfinal 120 parent gone\nend signal\n";
    CHECK_THAT(error_of(text), Catch::Contains("end reason"));
}

TEST_CASE("The parent's final reading before the box's is refused")
{
    CHECK_THAT(error_of(header() + "final 120 parent gone\n"), Catch::Contains("before the box's"));
}

TEST_CASE("A sample after a final reading is refused")
{
    CHECK_THAT(error_of(header() + "final 120 box gone\nsample 130 box gone\n"), Catch::Contains("after a final"));
}

TEST_CASE("A sample of another scope than the box is refused")
{
    CHECK_THAT(error_of(header() + "sample 120 parent gone\n"), Catch::Contains("scope"));
}

TEST_CASE("Values after gone are refused")
{
    CHECK_THAT(error_of(header() + "sample 120 box gone pids.current=1\n"), Catch::Contains("after gone"));
}

TEST_CASE("Unknown line kinds and end reasons are refused")
{
    CHECK_THAT(error_of(header() + "note 120\n"), Catch::Contains("unknown line kind"));
    CHECK_THAT(error_of(header() + "end bored\n"), Catch::Contains("unknown end reason"));
}

TEST_CASE("Fields must be separated by exactly one space")
{
    CHECK_THAT(error_of(header() + "sample  120 box gone\n"), Catch::Contains("empty field"));
    CHECK_THAT(error_of(header() + "sample 120 box gone \n"), Catch::Contains("empty field"));
}

TEST_CASE("A last line without its newline is refused as cut")
{
    CHECK_THAT(error_of(header() + "sample 120 box gone"), Catch::Contains("line 2") && Catch::Contains("newline"));
}

TEST_CASE("Lines, line length and total size are bounded")
{
    std::string many = header();
    for (std::size_t i = 0; i < limits::k_watch_max_lines; ++i) many += "sample 100 box gone\n";
    CHECK_THAT(error_of(many), Catch::Contains("more than"));
    const std::string long_line = header() + "end " + std::string(limits::k_watch_max_line_bytes, 'x') + "\n";
    CHECK_THAT(error_of(long_line), Catch::Contains("longer than"));
    CHECK_THAT(error_of(std::string(limits::k_watch_max_output_bytes + 1, '\n')), Catch::Contains("bytes"));
}

TEST_CASE("Each cgroup version has its own fixed set of raw kernel keys")
{
    const auto v1 = watcher::watch_keys(CgroupVersion::v1);
    const auto v2 = watcher::watch_keys(CgroupVersion::v2);
    CHECK(v1.size() == 14);
    CHECK(v2.size() == 17);
    CHECK(v1.front() == "memory.usage_in_bytes");
    CHECK(v2.back() == "pids.events.local.max");
    for (const auto key : v1) CHECK_FALSE(key.empty());
    for (const auto key : v2) CHECK_FALSE(key.empty());
}
