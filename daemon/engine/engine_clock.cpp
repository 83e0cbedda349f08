#include "daemon/engine/engine_clock.hpp"

#include "common/api_error_codes.hpp"
#include "common/clock.hpp"

#include <string>

namespace pybox::engine {

Expected<proto::ClockOffset> engine_clock_offset(std::int64_t before_ns, const EngineInfo& info,
                                                 std::int64_t after_ns)
{
    if (!info.system_time) return make_error(api_error::k_clock_unmeasured, "the engine's GET /info answer has no SystemTime");
    const auto engine_ns = parse_rfc3339_ns(*info.system_time);
    if (!engine_ns)
        return make_error(api_error::k_clock_unmeasured,
                          "the engine's SystemTime \"" + *info.system_time + "\" is not an RFC 3339 time");
    if (after_ns < before_ns)
        return make_error(api_error::k_clock_unmeasured, "the daemon's wall clock went backwards during GET /info");
    return proto::ClockOffset{*engine_ns - after_ns, *engine_ns - before_ns};
}

}  // namespace pybox::engine
