// Raw unix-socket clients for the hostile tests: bytes go to the daemon's socket exactly as
// given (no HTTP library in between), so malformed requests reach the server unaltered; and a
// host-side listener on an abstract socket name, for probing from inside a box.
// Blocking calls for the test thread; each call owns its own io_context.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pybox::test {

struct RawReply {
    std::string bytes;             // everything the server sent
    bool closed_by_server = false; // the server closed its end before the time limit
    bool write_failed = false;     // the server stopped reading before all bytes were sent
    std::chrono::milliseconds elapsed{0};  // from connecting to the close (or the time limit)
};

// Connects to `socket`, writes `request` (while reading, so a server that answers early and
// closes is seen), and reads until the server closes or `limit` passes. Never half-closes.
RawReply raw_exchange(const std::filesystem::path& socket, const std::string& request,
                      std::chrono::milliseconds limit = std::chrono::milliseconds(10'000));

// raw_exchange made by a child process that first drops to `uid` and `gid` with no supplementary
// groups (needs root). Throws std::runtime_error when the child cannot drop its identity or
// connect (the message says which).
RawReply raw_exchange_as(unsigned uid, unsigned gid, const std::filesystem::path& socket, const std::string& request,
                         std::chrono::milliseconds limit = std::chrono::milliseconds(10'000));

struct HttpAnswer {
    int status = 0;
    std::string head;  // status line and headers
    std::string body;
};
// Splits the bytes of consecutive HTTP/1.1 responses (each framed by Content-Length).
// A trailing incomplete response is dropped.
std::vector<HttpAnswer> split_answers(const std::string& bytes);

// Opens `count` connections that each send a request header one byte every `interval` and
// never finish it. Returns, per connection, how long after connecting the server closed it
// (nullopt: still open when `limit` passed; then it is closed here).
std::vector<std::optional<std::chrono::milliseconds>> trickle_headers(const std::filesystem::path& socket,
                                                                      std::size_t count,
                                                                      std::chrono::milliseconds interval,
                                                                      std::chrono::milliseconds limit);

// `count` connections to `socket` that never send a byte, held open for as long as the object
// lives (served on a thread of its own), noticing when the server closes them.
class IdleConnections {
public:
    IdleConnections(const std::filesystem::path& socket, std::size_t count);
    ~IdleConnections();
    IdleConnections(const IdleConnections&) = delete;
    IdleConnections& operator=(const IdleConnections&) = delete;
    // How many of them the server has closed (or answered) so far.
    std::size_t closed_by_server() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// Listens on an abstract unix socket name (no file) in the host's network namespace for as
// long as it lives; connections are left pending in the backlog.
class AbstractListener {
public:
    explicit AbstractListener(const std::string& name);
    ~AbstractListener();
    AbstractListener(const AbstractListener&) = delete;
    AbstractListener& operator=(const AbstractListener&) = delete;
    // True when a client in this network namespace can connect to the name.
    bool reachable_from_host() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace pybox::test
