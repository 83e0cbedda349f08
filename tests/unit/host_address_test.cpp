#include "util/host_address.hpp"

#include <catch2/catch.hpp>

using namespace pybox::util;

TEST_CASE("Loopback hosts and IP addresses are recognised")
{
    CHECK(is_loopback_host("localhost"));
    CHECK(is_loopback_host("127.0.0.1"));
    CHECK(is_loopback_host("127.255.0.9"));
    CHECK(is_loopback_host("::1"));
    CHECK_FALSE(is_loopback_host("localhost.example.org"));
    CHECK_FALSE(is_loopback_host("10.0.0.1"));
    CHECK(is_ip_address("10.0.0.1"));
    CHECK(is_ip_address("::1"));
    CHECK_FALSE(is_ip_address("localhost"));
}
