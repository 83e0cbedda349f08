// What was observed of one box's resource use: the receipt's observed.resources and the `unknown`
// keys with their reasons that go with it (docs/receipt.md, "resources"). The kernel watcher
// makes it from its readings (watcher/resource_summary.hpp); a backend that samples its boxes
// itself makes it from its samples (engine::BoxEnd::resources(), a cluster's kubelet).
#pragma once

#include <boost/json/object.hpp>

#include <string>
#include <utility>
#include <vector>

namespace pybox {

struct ResourceObservation {
    boost::json::object resources;
    std::vector<std::pair<std::string, std::string>> unknown;  // key -> why
};

}  // namespace pybox
