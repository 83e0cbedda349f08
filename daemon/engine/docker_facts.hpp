// The typed facts of box_engine.hpp read out of the Docker Engine API's answers: a box's state
// (GET /containers/{id}/json), the engine's info (GET /info), listed boxes (GET
// /containers/json) and an image's ID (GET /images/{ref}/json). Lenient in one way only: a
// field that is missing or of another type is left empty (never guessed), and the raw answer
// is kept where the receipt records it. Pure.
#pragma once

#include "common/error.hpp"
#include "daemon/engine/engine_facts.hpp"

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <vector>

namespace pybox::engine {

BoxInspection docker_inspection(boost::json::value inspected);
// The State object of an inspect answer.
BoxState docker_box_state(const boost::json::value& inspected);
EngineInfo docker_engine_info(boost::json::value info);
// The cgroup version and driver of an engine's info; an Error ("cgroup_unknown") names what was
// missing or unknown.
Expected<CgroupFacts> cgroup_facts_from_info(const EngineInfo& info);
// Items without an ID are left out.
std::vector<ListedBox> docker_listed_boxes(const boost::json::array& listed);
ImageFacts docker_image_facts(boost::json::value inspected);

}  // namespace pybox::engine
