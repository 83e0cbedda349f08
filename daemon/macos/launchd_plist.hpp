// The launchd agent that runs pyboxd on macOS (packaging/macos/com.pybox.pyboxd.plist is this
// function's output for the default settings; a unit test keeps the two equal).
//
// launchd expands neither ~ nor $HOME, so every path is absolute: the committed file says
// @HOME@ where the user's home goes, and its install comment substitutes it. Choices, mirroring
// packaging/pyboxd.service:
//   - RunAtLoad: pyboxd starts at login. It never starts the VM (only `pybox vm start` does).
//   - KeepAlive {SuccessfulExit: false}: restarted after a crash, not after a clean stop
//     (systemd's Restart=on-failure).
//   - AbandonProcessGroup: stopping pyboxd leaves the colima VM it started running (the
//     systemd unit's KillMode=process); only `pybox vm stop` stops it.
//   - ExitTimeOut 30: SIGTERM, then 30 s for the cleanup budget (15 s) before SIGKILL.
//   - Umask 077 (decimal 63); ProcessType Standard (Background would throttle runs' I/O and CPU).
//   - stdout and stderr appended to <runtime>/pyboxd.log.
//   - No EnvironmentVariables: nothing of the user's shell is copied in, and pyboxd gives colima
//     only what colima_environment names on top of launchd's minimal environment.
#pragma once

#include <string>

namespace pybox::macos {

inline constexpr const char* k_launchd_label = "com.pybox.pyboxd";

struct LaunchdSettings {
    std::string home = "@HOME@";  // the user's home folder, absolute
    // pyboxd as installed by `cmake --install build --prefix ~/.local`, under `home`.
    std::string pyboxd_under_home = "/.local/bin/pyboxd";
    std::string log_under_home = "/.pybox/runtime/pyboxd.log";
};

std::string launchd_plist(const LaunchdSettings& settings = {});

}  // namespace pybox::macos
