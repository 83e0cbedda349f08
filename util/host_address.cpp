#include "util/host_address.hpp"

#include <boost/asio/ip/address.hpp>

#include <string>

namespace pybox::util {

bool is_ip_address(std::string_view host)
{
    boost::system::error_code ec;
    (void)boost::asio::ip::make_address(std::string(host), ec);
    return !ec;
}

bool is_loopback_host(std::string_view host)
{
    if (host == "localhost") return true;
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(std::string(host), ec);
    return !ec && address.is_loopback();
}

}  // namespace pybox::util
