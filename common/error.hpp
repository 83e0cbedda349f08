// Expected failures as values: a stable machine code plus one human sentence. Exceptions are
// kept for bugs and start-up failures (docs/architecture.md, "Conventions").
#pragma once

#include <boost/assert/source_location.hpp>
#include <boost/system/result.hpp>

#include <stdexcept>
#include <string>
#include <utility>

namespace pybox {

// Not an aggregate on purpose: Expected<std::string> must not treat a string as an Error.
struct Error {
    Error() = default;
    Error(std::string error_code, std::string error_message)
        : code(std::move(error_code)), message(std::move(error_message)) {}
    std::string code;     // stable, machine-readable, e.g. "engine_unreachable"
    std::string message;  // one sentence a user can act on
};

inline Error make_error(std::string code, std::string message)
{
    return Error(std::move(code), std::move(message));
}

// Thrown only when a caller calls .value() on a failed Expected; that is a bug.
class ErrorException : public std::runtime_error {
public:
    explicit ErrorException(Error error)
        : std::runtime_error(error.code + ": " + error.message), m_error(std::move(error)) {}
    const Error& error() const noexcept { return m_error; }

private:
    Error m_error;
};

[[noreturn]] inline void throw_exception_from_error(const Error& error, const boost::source_location&)
{
    throw ErrorException(error);
}

template <class T>
using Expected = boost::system::result<T, Error>;

}  // namespace pybox
