#include "daemon/run/engine_clock.hpp"

#include "common/clock.hpp"

#include <boost/json/object.hpp>

#include <string>

namespace pybox::daemon {

Expected<proto::ClockOffset> engine_clock_offset(std::int64_t before_ns, const boost::json::value& info,
                                                 std::int64_t after_ns)
{
    const auto* object = info.if_object();
    const auto* system_time = object != nullptr ? object->if_contains("SystemTime") : nullptr;
    if (system_time == nullptr || !system_time->is_string())
        return make_error("clock_unmeasured", "the engine's GET /info answer has no SystemTime");
    const auto engine_ns = parse_rfc3339_ns(system_time->get_string());
    if (!engine_ns)
        return make_error("clock_unmeasured", "the engine's SystemTime \"" + std::string(system_time->get_string()) +
                                                  "\" is not an RFC 3339 time");
    if (after_ns < before_ns)
        return make_error("clock_unmeasured", "the daemon's wall clock went backwards during GET /info");
    return proto::ClockOffset{*engine_ns - after_ns, *engine_ns - before_ns};
}

}  // namespace pybox::daemon
