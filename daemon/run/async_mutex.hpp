// AsyncMutex: lets one coroutine at a time through, in arrival order, without blocking the
// io_context. Not thread-safe: use from one executor. lock() must be matched by unlock();
// prefer the RAII guard returned by scoped_lock().
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <utility>

namespace pybox::daemon {

class AsyncMutex {
public:
    explicit AsyncMutex(boost::asio::any_io_executor executor) : m_slot(std::move(executor), 1) {}

    class Guard {
    public:
        explicit Guard(AsyncMutex* mutex) : m_mutex(mutex) {}
        Guard(Guard&& other) noexcept : m_mutex(std::exchange(other.m_mutex, nullptr)) {}
        Guard& operator=(Guard&&) = delete;
        ~Guard() { if (m_mutex) m_mutex->unlock(); }

    private:
        AsyncMutex* m_mutex;
    };

    boost::asio::awaitable<Guard> scoped_lock()
    {
        co_await m_slot.async_send(boost::system::error_code{}, boost::asio::use_awaitable);
        co_return Guard(this);
    }

private:
    void unlock() { m_slot.try_receive([](boost::system::error_code) {}); }

    boost::asio::experimental::channel<void(boost::system::error_code)> m_slot;
};

}  // namespace pybox::daemon
