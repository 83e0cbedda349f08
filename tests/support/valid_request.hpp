// A run request the tests know to be valid, made as the daemon's parsers make one (the only way:
// proto::validated_run_request). An invalid one is a mistake in the test, which fails it.
#pragma once

#include "proto/run_request.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace pybox::test {

inline proto::ValidRunRequest valid_request(proto::RunRequest request)
{
    auto valid = proto::validated_run_request(std::move(request));
    if (!valid) throw std::logic_error("the test's run request is not valid: " + valid.error().message);
    return std::move(*valid);
}

// A valid request to run `source`, every other field as a request that names only the source.
inline proto::ValidRunRequest valid_request(std::string source)
{
    proto::RunRequest request;
    request.source = std::move(source);
    return valid_request(std::move(request));
}

}  // namespace pybox::test
