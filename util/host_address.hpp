// What a host named in a URL or an image reference is: an IP address, a loopback one. Pure;
// no name is resolved.
#pragma once

#include <string_view>

namespace pybox::util {

// Whether a host as written is a loopback one: "localhost", 127.x.x.x or ::1 (no brackets).
bool is_loopback_host(std::string_view host);

// Whether the host is an IP address (IPv4, or IPv6 without brackets).
bool is_ip_address(std::string_view host);

}  // namespace pybox::util
