// Attempt notes: <runtime>/attempts/<run>.json is written before a box is built and deleted
// once its removal is confirmed. A note left behind means a run whose end was never
// confirmed (daemon killed, engine gone); the sweep settles it later.
#pragma once

#include "common/error.hpp"
#include "common/paths.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pybox::daemon {

struct AttemptNote {
    std::string run_id;
    std::string installation_id;
    std::string created_at;       // RFC 3339
    std::int64_t expires_at = 0;  // unix seconds
    std::string container_id;     // empty until the create call answered
};

class AttemptLog {
public:
    explicit AttemptLog(RuntimePaths paths) : m_paths(std::move(paths)) {}

    Expected<void> write(const AttemptNote& note) const;
    Expected<void> remove(const std::string& run_id) const;
    // Every readable note; damaged files are reported as notes with only run_id set.
    std::vector<AttemptNote> list() const;

private:
    RuntimePaths m_paths;
};

}  // namespace pybox::daemon
