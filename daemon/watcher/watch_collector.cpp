#include "daemon/watcher/watch_collector.hpp"

#include "common/limits.hpp"

#include <algorithm>

namespace pybox::watcher {

void WatchCollector::take(std::string_view bytes)
{
    const std::size_t room = limits::k_watch_max_output_bytes - output.text.size();
    if (bytes.size() > room) output.truncated = true;
    output.text.append(bytes.substr(0, std::min(room, bytes.size())));
    if (!header_seen && output.text.find('\n') != std::string::npos) header_seen = true;
    if (!output.first_sample_after_s && output.text.find("\nsample ") != std::string::npos)
        output.first_sample_after_s = seconds_between(started, MonoClock::now());
}

}  // namespace pybox::watcher
