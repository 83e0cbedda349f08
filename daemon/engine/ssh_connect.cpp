#include "daemon/engine/ssh_connect.hpp"

#include "common/api_error_codes.hpp"
#include "daemon/engine/ssh_rules.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pybox::engine::detail {

namespace {

using Clock = SshClock;
using std::chrono::milliseconds;

// libssh2_init() once per process, before the first session.
void init_libssh2()
{
    static const int once = [] { return libssh2_init(0); }();
    (void)once;
}

int remaining_ms(Clock::time_point deadline)
{
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
}

std::string key_type_name(int type)
{
    switch (type) {
    case LIBSSH2_HOSTKEY_TYPE_RSA: return "ssh-rsa";
    case LIBSSH2_HOSTKEY_TYPE_DSS: return "ssh-dss";
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_256: return "ecdsa-sha2-nistp256";
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_384: return "ecdsa-sha2-nistp384";
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_521: return "ecdsa-sha2-nistp521";
    case LIBSSH2_HOSTKEY_TYPE_ED25519: return "ssh-ed25519";
    default: return "unknown type";
    }
}

int known_host_key_bits(int type)
{
    switch (type) {
    case LIBSSH2_HOSTKEY_TYPE_RSA: return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
    case LIBSSH2_HOSTKEY_TYPE_DSS: return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_256: return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_384: return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_521: return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
    case LIBSSH2_HOSTKEY_TYPE_ED25519: return LIBSSH2_KNOWNHOST_KEY_ED25519;
    default: return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
    }
}


class Connector {
public:
    Connector(const SshEngine& engine, const std::string& describe, SshLink& link)
        : m_engine(engine), m_describe(describe), m_link(link)
    {
    }

    Expected<void> check_identity_file() const
    {
        struct stat info {};
        const auto& file = m_engine.identity_file;
        if (::stat(file.c_str(), &info) != 0)
            return make_error(api_error::k_engine_auth_refused, "cannot use identity_file " + file.string() + " for " +
                                                         m_describe + ": " + std::strerror(errno));
        const auto problem = identity_file_problem(S_ISREG(info.st_mode), info.st_mode & 07777);
        if (!problem.empty())
            return make_error(api_error::k_engine_auth_refused, "PyBox does not offer identity_file " + file.string() + " to " +
                                                         m_describe + ": " + problem + ".");
        return {};
    }

    Expected<void> open_socket(Clock::time_point deadline)
    {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* found = nullptr;
        const auto port = std::to_string(m_engine.address.port);
        if (const int rc = ::getaddrinfo(m_engine.address.host.c_str(), port.c_str(), &hints, &found); rc != 0)
            return unreachable(std::string("cannot resolve the host name: ") + ::gai_strerror(rc));
        std::string why = "no address";
        for (auto* address = found; address != nullptr; address = address->ai_next) {
            int fd = ::socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                              address->ai_protocol);
            if (fd < 0) {
                why = std::strerror(errno);
                continue;
            }
            int error = 0;
            if (::connect(fd, address->ai_addr, address->ai_addrlen) != 0) {
                error = errno;
                if (error == EINPROGRESS) {
                    pollfd entry{fd, POLLOUT, 0};
                    const int ready = ::poll(&entry, 1, remaining_ms(deadline));
                    socklen_t length = sizeof error;
                    if (ready <= 0)
                        error = ETIMEDOUT;
                    else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0)
                        error = errno;
                }
            }
            if (error == 0) {
                const int on = 1;
                ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
                m_link.socket = fd;
                ::freeaddrinfo(found);
                return {};
            }
            why = error == ETIMEDOUT ? "the TCP connection timed out" : std::strerror(error);
            close_fd(fd);
        }
        ::freeaddrinfo(found);
        return unreachable(why);
    }

    Expected<void> check_host_key()
    {
        std::size_t key_length = 0;
        int key_type = LIBSSH2_HOSTKEY_TYPE_UNKNOWN;
        const char* key = libssh2_session_hostkey(m_link.session, &key_length, &key_type);
        const char* hash = libssh2_hostkey_hash(m_link.session, LIBSSH2_HOSTKEY_HASH_SHA256);
        if (key == nullptr || hash == nullptr)
            return make_error(api_error::k_engine_host_key_refused, m_describe + " offered no host key PyBox can check");
        const auto seen = format_sha256_fingerprint(std::string_view(hash, 32));
        const auto offered = m_describe + " offered the host key " + seen + " (" + key_type_name(key_type) + ")";
        const auto advice = "; nothing was sent to it. If that is the host's key (compare `ssh-keygen -lf` of the "
                            "host's /etc/ssh/ssh_host_*_key.pub, run on the host), pin it in config.json: \"host_key\": \"" +
                            seen + "\".";
        if (m_engine.host_key_sha256) {
            if (seen == *m_engine.host_key_sha256) return {};
            return make_error(api_error::k_engine_host_key_refused,
                              offered + ", not the pinned " + *m_engine.host_key_sha256 + advice);
        }
        const auto& file = m_engine.known_hosts.value();
        std::unique_ptr<LIBSSH2_KNOWNHOSTS, void (*)(LIBSSH2_KNOWNHOSTS*)> hosts(libssh2_knownhost_init(m_link.session),
                                                                               libssh2_knownhost_free);
        if (!hosts) return make_error(api_error::k_engine_host_key_refused, "cannot check the host key of " + m_describe);
        if (libssh2_knownhost_readfile(hosts.get(), file.c_str(), LIBSSH2_KNOWNHOST_FILE_OPENSSH) < 0)
            return make_error(api_error::k_engine_host_key_refused, "cannot read the known_hosts file " + file.string() +
                                                             " for " + m_describe + ": " + last_ssh_error(m_link.session));
        const int check = libssh2_knownhost_checkp(
            hosts.get(), m_engine.address.host.c_str(), m_engine.address.port, key, key_length,
            LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | known_host_key_bits(key_type), nullptr);
        if (check == LIBSSH2_KNOWNHOST_CHECK_MATCH) return {};
        const auto name = known_hosts_name(m_engine.address.host, m_engine.address.port);
        const std::string what = check == LIBSSH2_KNOWNHOST_CHECK_MISMATCH
                                     ? ", but " + file.string() + " lists another key for " + name
                                     : ", which " + file.string() + " does not list for " + name;
        return make_error(api_error::k_engine_host_key_refused, offered + what + advice);
    }

    Expected<void> connect(Clock::time_point deadline, unsigned keepalive_s, void* abstract, SshReceive receive)
    {
        if (auto identity = check_identity_file(); !identity) return identity.error();
        if (auto opened = open_socket(deadline); !opened) return opened.error();
        m_link.session = libssh2_session_init_ex(nullptr, nullptr, nullptr, abstract);
        if (m_link.session == nullptr) {
            close_fd(m_link.socket);
            return unreachable("libssh2 could not make a session");
        }
        libssh2_session_callback_set(m_link.session, LIBSSH2_CALLBACK_RECV, reinterpret_cast<void*>(receive));
        libssh2_session_set_blocking(m_link.session, 0);
        auto failed = [this](Error error) -> Expected<void> {
            close_ssh(m_link, true);
            return error;
        };
        int rc = ssh_until_done(m_link, deadline, [this] { return libssh2_session_handshake(m_link.session, m_link.socket); });
        if (rc != 0)
            return failed(unreachable(rc == LIBSSH2_ERROR_TIMEOUT ? "the ssh handshake timed out"
                                                                  : "the ssh handshake failed: " + last_ssh_error(m_link.session)));
        if (auto key = check_host_key(); !key) return failed(key.error());
        const auto& user = m_engine.address.user;
        const auto identity = m_engine.identity_file.string();
        rc = ssh_until_done(m_link, deadline, [&] {
            return libssh2_userauth_publickey_fromfile_ex(m_link.session, user.c_str(), static_cast<unsigned>(user.size()),
                                                          nullptr, identity.c_str(), nullptr);
        });
        if (rc != 0) {
            if (rc == LIBSSH2_ERROR_TIMEOUT) return failed(unreachable("authentication timed out"));
            if (is_session_error(rc)) return failed(unreachable("the connection failed during authentication: " + last_ssh_error(m_link.session)));
            return failed(make_error(api_error::k_engine_auth_refused, m_describe + " refused the key in " + identity +
                                                                " for user " + user + " (" + last_ssh_error(m_link.session) + ")."));
        }
        libssh2_keepalive_config(m_link.session, 1, keepalive_s);
        return {};
    }

private:
    Error unreachable(const std::string& why) const
    {
        return make_error(api_error::k_engine_unreachable, "cannot reach " + m_describe + ": " + why);
    }

    const SshEngine& m_engine;
    const std::string& m_describe;
    SshLink& m_link;
};

}  // namespace

bool is_session_error(int rc)
{
    switch (rc) {
    case LIBSSH2_ERROR_SOCKET_SEND:
    case LIBSSH2_ERROR_SOCKET_RECV:
    case LIBSSH2_ERROR_SOCKET_DISCONNECT:
    case LIBSSH2_ERROR_SOCKET_TIMEOUT:
    case LIBSSH2_ERROR_TIMEOUT:
    case LIBSSH2_ERROR_DECRYPT:
    case LIBSSH2_ERROR_ENCRYPT:
    case LIBSSH2_ERROR_INVALID_MAC:
    case LIBSSH2_ERROR_PROTO:
    case LIBSSH2_ERROR_BAD_SOCKET:
    case LIBSSH2_ERROR_KEX_FAILURE:
    case LIBSSH2_ERROR_ALLOC:
        return true;
    default:
        return false;
    }
}

void close_fd(int& fd)
{
    if (fd >= 0) ::close(fd);
    fd = -1;
}

std::string last_ssh_error(LIBSSH2_SESSION* session)
{
    char* message = nullptr;
    libssh2_session_last_error(session, &message, nullptr, 0);
    return message != nullptr && *message != '\0' ? message : "unknown libssh2 error";
}

bool wait_ssh_socket(const SshLink& link, SshClock::time_point deadline)
{
    const int directions = libssh2_session_block_directions(link.session);
    pollfd entry{link.socket, 0, 0};
    if ((directions & LIBSSH2_SESSION_BLOCK_INBOUND) != 0) entry.events |= POLLIN;
    if ((directions & LIBSSH2_SESSION_BLOCK_OUTBOUND) != 0) entry.events |= POLLOUT;
    if (entry.events == 0) entry.events = POLLIN;
    const int left = remaining_ms(deadline);
    if (left == 0) return false;
    return ::poll(&entry, 1, left) >= 0;
}

Expected<SshLink> connect_ssh(const SshEngine& engine, const std::string& describe, SshClock::time_point deadline,
                              unsigned keepalive_s, void* abstract, SshReceive receive)
{
    init_libssh2();
    SshLink link;
    Connector connector(engine, describe, link);
    if (auto connected = connector.connect(deadline, keepalive_s, abstract, receive); !connected) return connected.error();
    return link;
}

void close_ssh(SshLink& link, bool graceful)
{
    constexpr auto goodbye = std::chrono::milliseconds(500);
    if (link.session != nullptr) {
        if (graceful)
            ssh_until_done(link, SshClock::now() + goodbye, [&link] {
                return libssh2_session_disconnect(link.session, "pyboxd closes the session");
            });
        // With the socket shut, freeing cannot wait for the host (non-blocking libssh2 would
        // otherwise answer EAGAIN while it closes channels, and leak the session).
        if (link.socket >= 0) ::shutdown(link.socket, SHUT_RDWR);
        const int rc = ssh_until_done(link, SshClock::now() + goodbye, [&link] { return libssh2_session_free(link.session); });
        (void)rc;  // a session that still cannot be freed after that is leaked, not waited for
        link.session = nullptr;
    }
    close_fd(link.socket);
}

}  // namespace pybox::engine::detail
