// This installation's random owner id, kept in <runtime>/installation.json and created on
// first use. Every box carries it as its pybox.owner label; the sweep touches no other box.
#pragma once

#include "common/error.hpp"
#include "common/paths.hpp"

#include <string>

namespace pybox::daemon {

Expected<std::string> load_or_create_installation_id(const RuntimePaths& paths);

}  // namespace pybox::daemon
