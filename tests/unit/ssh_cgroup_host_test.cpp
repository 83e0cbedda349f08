#include "daemon/watcher/ssh_cgroup_host.hpp"
#include "daemon/watcher/watch_script.hpp"

#include <catch2/catch.hpp>

using namespace pybox::watcher;

TEST_CASE("The remote watcher command runs the unchanged script behind the relay, every word quoted")
{
    const WatchTarget target{CgroupVersion::v2, "/sys/fs/cgroup", "/pybox-x/r'1/$(id)", "/pybox-x/r'1"};
    const auto argv = watch_command(target, watch_schedule(2));
    const auto command = remote_watch_command(argv);
    CHECK(command.rfind("exec 'sh' '-c' '", 0) == 0);
    CHECK_THAT(command, Catch::Contains("' 'pybox-relay' '/bin/sh' '-c' '"));
    // The script's own single quotes are each closed, escaped and reopened.
    std::string quoted_script;
    for (char c : watch_script()) quoted_script += c == '\'' ? std::string("'\\''") : std::string(1, c);
    CHECK_THAT(command, Catch::Contains("'" + quoted_script + "' 'pybox-watch' '2' '/sys/fs/cgroup'"));
    CHECK_THAT(command, Catch::Contains("'/pybox-x/r'\\''1/$(id)'"));
}

TEST_CASE("The relay passes only USR1 and USR2 on and stops the watcher when its stdin ends")
{
    const auto relay = watch_relay_script();
    CHECK_THAT(std::string(relay), Catch::Contains("USR1 | USR2) kill -s \"$signal\" \"$watcher\""));
    CHECK_THAT(std::string(relay), Catch::Contains("kill -s TERM \"$watcher\""));
}
