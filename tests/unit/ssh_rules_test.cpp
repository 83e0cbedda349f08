#include "daemon/engine/ssh_rules.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace pybox::engine;
using std::chrono::milliseconds;

TEST_CASE("A SHA-256 host key fingerprint is written as ssh-keygen prints it, without padding")
{
    // ssh-keygen -lf of a key whose SHA-256 is 32 zero bytes would print this.
    CHECK(format_sha256_fingerprint(std::string(32, '\0')) == "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    std::string digest;
    for (int i = 0; i < 32; ++i) digest += static_cast<char>(0xF8 + i % 8);
    const auto text = format_sha256_fingerprint(digest);
    CHECK(text.size() == 7 + 43);
    CHECK(text.find('=') == std::string::npos);
    CHECK(text.rfind("SHA256:+P", 0) == 0);
}

TEST_CASE("Shell quoting makes any bytes one literal word")
{
    CHECK(shell_quote("") == "''");
    CHECK(shell_quote("plain") == "'plain'");
    CHECK(shell_quote("it's") == "'it'\\''s'");
    CHECK(shell_quote("$(rm -rf /) `x` \"y\" \\ ; | &\n") == "'$(rm -rf /) `x` \"y\" \\ ; | &\n'");
    CHECK(shell_command({"sh", "-c", "echo 'a b'", ""}) == "'sh' '-c' 'echo '\\''a b'\\''' ''");
}

TEST_CASE("The engine stream command runs socat to the quoted socket path")
{
    CHECK(engine_stream_command("/run/docker.sock") == "socat -t 3600 STDIO 'UNIX-CONNECT:/run/docker.sock'");
}

TEST_CASE("Only plain remote socket paths are accepted for socat")
{
    CHECK(is_plain_remote_path("/var/run/docker.sock"));
    CHECK(is_plain_remote_path("/home/u-1/.pybox/runtime/engine@2/docker+x.sock"));
    CHECK_FALSE(is_plain_remote_path("/run/a,b.sock"));
    CHECK_FALSE(is_plain_remote_path("/run/a:b.sock"));
    CHECK_FALSE(is_plain_remote_path("/run/a b.sock"));
    CHECK_FALSE(is_plain_remote_path("/run/a'b.sock"));
    CHECK_FALSE(is_plain_remote_path("/run/a!b"));
}

TEST_CASE("Reconnecting waits 1 s, doubling up to 30 s")
{
    const milliseconds first{1000}, most{30000};
    CHECK(reconnect_delay(1, first, most) == milliseconds(1000));
    CHECK(reconnect_delay(2, first, most) == milliseconds(2000));
    CHECK(reconnect_delay(3, first, most) == milliseconds(4000));
    CHECK(reconnect_delay(5, first, most) == milliseconds(16000));
    CHECK(reconnect_delay(6, first, most) == milliseconds(30000));
    CHECK(reconnect_delay(1000, first, most) == milliseconds(30000));
}

TEST_CASE("known_hosts names a host on another port than 22 as [host]:port")
{
    CHECK(known_hosts_name("build-1.example.org", 22) == "build-1.example.org");
    CHECK(known_hosts_name("127.0.0.1", 2222) == "[127.0.0.1]:2222");
    CHECK(known_hosts_name("::1", 2200) == "[::1]:2200");
}

TEST_CASE("An identity file is offered only when it is a regular file private to its owner")
{
    CHECK(identity_file_problem(true, 0600).empty());
    CHECK(identity_file_problem(true, 0400).empty());
    CHECK(identity_file_problem(true, 0644).find("mode 0644") != std::string::npos);
    CHECK(identity_file_problem(true, 0640).find("chmod 600") != std::string::npos);
    CHECK_FALSE(identity_file_problem(true, 0602).empty());
    CHECK(identity_file_problem(false, 0600) == "it is not a regular file");
}
