#include "daemon/run/files_helper.hpp"

#include "common/ids.hpp"
#include "common/limits.hpp"
#include "common/sha256.hpp"
#include "proto/box_policy.hpp"
#include "util/json_writer.hpp"
#include "util/text.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace pybox::daemon {

namespace json = boost::json;

const std::string& files_helper_sha256()
{
    static const std::string sha = sha256_hex(files_helper_text());
    return sha;
}

std::vector<std::string> files_box_command(double timeout_s)
{
    std::vector<std::string> command = proto::box_command(timeout_s);
    command.back() = "-c";
    command.emplace_back(files_helper_text());
    return command;
}

std::string new_files_marker() { return "\n<pybox-files-report " + random_id_128() + ">\n"; }

std::string files_helper_input(const proto::RunRequest& request, const std::string& marker)
{
    json::array inputs;
    if (request.files) {
        for (const auto& input : request.files->inputs) {
            inputs.push_back(json::object{{"name", input.name}, {"base64", util::base64_encode(input.bytes)}});
        }
    }
    return util::to_json_text(json::object{{"marker", marker}, {"source", request.source}, {"inputs", std::move(inputs)}});
}

}  // namespace pybox::daemon
