// A scripted stand-in for colima (a shell script that answers each subcommand the way colima
// 0.10 does and records its calls), for the tests of ColimaVm and ColimaEngineControl. Its
// `colima ssh -- sh -c COMMAND` runs COMMAND on this host, standing in for the VM.
#pragma once

#include "daemon/macos/colima_profile.hpp"
#include "daemon/macos/colima_vm.hpp"
#include "tests/support/source_text.hpp"
#include "tests/support/temp_runtime.hpp"

#include <filesystem>
#include <fstream>
#include <string>

namespace pybox::test {

namespace fs = std::filesystem;
using macos::ColimaLayout;
using macos::ColimaVm;

struct FakeColima {
    test::TempRuntime runtime;
    fs::path bin = runtime.root / "fake-bin";
    fs::path calls = runtime.root / "fake-calls";
    fs::path mounts = runtime.root / "fake-mounts";
    fs::path version = runtime.root / "fake-version";
    fs::path start_delay = runtime.root / "fake-start-delay";  // seconds `start` takes, when present

    FakeColima()
    {
        fs::create_directory(bin);
        const ColimaLayout layout(runtime.paths);
        std::ofstream(mounts) << "/dev/vda1 / ext4 rw,relatime 0 0\nproc /proc proc rw 0 0\n";
        std::ofstream(version) << "colima version 0.10.1\ngit commit: 0123abcd\n";
        std::ofstream script(bin / "colima");
        script << "#!/bin/sh\n"
               << "echo \"$* COLIMA_HOME=$COLIMA_HOME\" >> '" << calls.string() << "'\n"
               << "case \"$1\" in\n"
               << "version) cat '" << version.string() << "' ;;\n"
               << "start) if [ -f '" << start_delay.string() << "' ]; then sleep \"$(cat '" << start_delay.string() << "')\"; fi\n"
               << "  mkdir -p \"$LIMA_HOME/colima-pybox\"\n"
               << "  printf '%s\\n' '{\"level\":\"info\",\"msg\":\"Forwarding `/var/run/docker.sock` (guest) to `"
               << layout.docker_socket.string() << "` (host)\",\"time\":\"t\"}' > \"$LIMA_HOME/colima-pybox/ha.stderr.log\" ;;\n"
               << "status) echo '{\"display_name\":\"colima [profile=pybox]\",\"driver\":\"macOS Virtualization.Framework\","
               << "\"arch\":\"aarch64\",\"runtime\":\"docker\",\"mount_type\":\"virtiofs\",\"docker_socket\":\"unix://"
               << layout.docker_socket.string() << "\",\"kubernetes\":false,\"cpu\":2,\"memory\":2147483648,\"disk\":21474836480}' ;;\n"
               << "ssh) case \"$6\" in\n"
               << "  /proc/self/mounts) cat '" << mounts.string() << "' ;;\n"
               // `sh -c COMMAND`: the fallback's commands, run on this host as if it were the VM.
               << "  -c) exec /bin/sh -c \"$7\" ;;\n"
               << "  *) echo 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHBrDrVvZOPZz6u1+ItItDCcdBz11Z9swXD2365GL8// root@colima-pybox' ;;\n"
               << "  esac ;;\n"
               << "ssh-config) printf 'Host colima-pybox\\n  IdentityFile \"%s\"\\n  UserKnownHostsFile /dev/null\\n"
               << "  User ada\\n  Hostname 127.0.0.1\\n  Port 60022\\n\\n' \"$LIMA_HOME/_config/user\" ;;\n"
               << "stop) ;;\n"
               << "*) exit 2 ;;\n"
               << "esac\n";
        script.close();
        fs::permissions(bin / "colima", fs::perms(0755));
    }

    ColimaVm vm() { return ColimaVm(runtime.paths, {bin / "colima", bin / "docker"}); }
    std::string called() { return test::read_text(calls); }
};


}  // namespace pybox::test
