#include "proto/run_request.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"
#include "proto/box_policy.hpp"
#include "proto/request_json.hpp"
#include "util/json_writer.hpp"
#include "util/text.hpp"

#include <boost/json/error.hpp>
#include <boost/json/value.hpp>

#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pybox::proto {

namespace json = boost::json;

namespace {

std::string accepted_images_text()
{
    std::string text;
    for (const auto& name : known_images()) {
        text += name + ", ";
    }
    return text + "or the name of an own image built with `pybox image build`";
}

Error output_limit_error(const std::string& got)
{
    return make_error(api_error::k_output_limit_out_of_range,
                      "output_limit_bytes must be an integer between " +
                          std::to_string(limits::k_min_output_limit_bytes) + " and " +
                          std::to_string(limits::k_max_output_limit_bytes) + " (got " + got + ").");
}

const char* const k_files_shape =
    "files must be an object {\"inputs\": [{\"name\": NAME, \"base64\": BYTES}, ...], \"outputs\": true|false}.";

Expected<RunRequest::Files> parse_files(const json::value& value)
{
    if (!value.is_object()) {
        return invalid_request(k_files_shape);
    }
    RunRequest::Files files;
    for (const auto& [key, item] : value.get_object()) {
        if (key == "outputs" && item.is_bool()) {
            files.outputs = item.get_bool();
        } else if (key == "inputs" && item.is_array()) {
            for (const auto& input : item.get_array()) {
                const auto* object = input.if_object();
                const auto* name = object != nullptr ? object->if_contains("name") : nullptr;
                const auto* base64 = object != nullptr ? object->if_contains("base64") : nullptr;
                if (object == nullptr || object->size() != 2 || name == nullptr || !name->is_string() ||
                    base64 == nullptr || !base64->is_string()) {
                    return invalid_request(k_files_shape);
                }
                if (files.inputs.size() == limits::k_max_input_files) {
                    return make_error(api_error::k_input_files_invalid, "At most " + std::to_string(limits::k_max_input_files) +
                                                                 " input files are allowed.");
                }
                auto bytes = util::base64_decode(base64->get_string());
                if (!bytes) {
                    return invalid_request("files.inputs: the bytes of \"" + util::printable_excerpt(name->get_string()) +
                                           "\" are not valid base64.");
                }
                files.inputs.push_back(FileContent{std::string(name->get_string()), std::move(*bytes)});
            }
        } else {
            return invalid_request(k_files_shape);
        }
    }
    return files;
}

}  // namespace

Expected<ValidRunRequest> parse_run_request(std::string_view body)
{
    auto document = parse_request_json(body);
    if (!document) {
        return document.error();
    }
    return run_request_from_json(*document);
}

Expected<ValidRunRequest> run_request_from_json(const json::value& document)
{
    if (!document.is_object()) {
        return invalid_request("The request body must be one JSON object with the key \"source\".");
    }
    RunRequest request;
    bool has_source = false;
    for (const auto& [key, value] : document.get_object()) {
        if (key == "source") {
            if (!value.is_string()) {
                return invalid_request("source must be a string holding the program's text.");
            }
            request.source.assign(value.get_string().data(), value.get_string().size());
            has_source = true;
        } else if (key == "timeout_s") {
            if (!value.is_number()) {
                return invalid_request("timeout_s must be a number of seconds between " +
                                       util::format_number(limits::k_min_timeout_s) + " and " +
                                       util::format_number(limits::k_max_timeout_s) + ".");
            }
            request.timeout_s = value.to_number<double>();
        } else if (key == "image") {
            if (!value.is_string()) {
                return invalid_request("image must be a string, one of " + accepted_images_text() + ".");
            }
            request.image.assign(value.get_string().data(), value.get_string().size());
        } else if (key == "output_limit_bytes") {
            if (value.is_double()) {
                // A whole number written with a fraction or an exponent (65536.0, 6.5536e4) is
                // that number, as JSON Schema's "integer" has it; any other is refused as itself.
                const double number = value.get_double();
                if (number != std::floor(number) || number < static_cast<double>(limits::k_min_output_limit_bytes) ||
                    number > static_cast<double>(limits::k_max_output_limit_bytes)) {
                    return output_limit_error(util::format_number(number));
                }
                request.output_limit_bytes = static_cast<std::size_t>(number);
            } else if (value.is_int64()) {
                if (value.get_int64() < 0) {
                    return output_limit_error(std::to_string(value.get_int64()));
                }
                request.output_limit_bytes = static_cast<std::size_t>(value.get_int64());
            } else if (value.is_uint64()) {
                request.output_limit_bytes = static_cast<std::size_t>(value.get_uint64());
            } else {
                return invalid_request("output_limit_bytes must be an integer between " +
                                       std::to_string(limits::k_min_output_limit_bytes) + " and " +
                                       std::to_string(limits::k_max_output_limit_bytes) + ".");
            }
        } else if (key == "files") {
            auto files = parse_files(value);
            if (!files) {
                return files.error();
            }
            request.files = std::move(*files);
        } else {
            return invalid_request("Unknown key \"" + util::printable_excerpt(key) +
                                   "\"; the accepted keys are source, timeout_s, image, "
                                   "output_limit_bytes and files.");
        }
    }
    if (!has_source) {
        return invalid_request("source is required: a string holding the program's text.");
    }
    return validated_run_request(std::move(request));
}

namespace {

Expected<void> check_source(const std::string& source)
{
    if (source.size() > limits::k_max_source_bytes) {
        return make_error(api_error::k_source_too_large, "source must be at most " +
                                                  std::to_string(limits::k_max_source_bytes) +
                                                  " bytes (got " + std::to_string(source.size()) +
                                                  ").");
    }
    if (!util::is_valid_utf8(source)) {
        return invalid_request("source must be UTF-8 text.");
    }
    return {};
}

}  // namespace

Expected<ValidRunRequest> validated_run_request(RunRequest request)
{
    if (auto source = check_source(request.source); !source) {
        return source.error();
    }
    if (!std::isfinite(request.timeout_s) || request.timeout_s < limits::k_min_timeout_s ||
        request.timeout_s > limits::k_max_timeout_s) {
        return make_error(api_error::k_timeout_out_of_range, "timeout_s must be between " +
                                                      util::format_number(limits::k_min_timeout_s) + " and " +
                                                      util::format_number(limits::k_max_timeout_s) +
                                                      " seconds (got " + util::format_number(request.timeout_s) +
                                                      ").");
    }
    if (request.output_limit_bytes < limits::k_min_output_limit_bytes ||
        request.output_limit_bytes > limits::k_max_output_limit_bytes) {
        return output_limit_error(std::to_string(request.output_limit_bytes));
    }
    auto policy = policy_for_image(request.image);
    if (!policy) {
        return make_error(api_error::k_unknown_image, "image must be one of " + accepted_images_text() + " (got \"" +
                                               util::printable_excerpt(request.image) + "\").");
    }
    if (request.files) {
        const auto& inputs = request.files->inputs;
        auto checked = check_file_set(inputs, {limits::k_max_input_files, limits::k_max_input_bytes},
                                      api_error::k_input_files_invalid, "input");
        if (!checked) {
            return checked.error();
        }
        for (const FileContent& input : inputs) {
            if (is_in_output_folder(input.name)) {
                return make_error(api_error::k_input_files_invalid,
                                  "input \"" + util::printable_excerpt(input.name) + "\": \"" + std::string(k_output_folder_name) +
                                      "\" is the output folder; rename the input.");
            }
        }
        policy->tmpfs_bytes = limits::k_files_tmpfs_bytes;  // the seed's larger /tmp for runs that move files
    }
    request.timeout_s = std::round(request.timeout_s * limits::k_timeout_steps_per_s) / limits::k_timeout_steps_per_s;
    return ValidRunRequest(std::move(request), std::move(*policy));
}

Expected<ValidRunRequest> ValidRunRequest::with_source(std::string source) const
{
    if (auto checked = check_source(source); !checked) {
        return checked.error();
    }
    RunRequest request = m_request;
    request.source = std::move(source);
    return ValidRunRequest(std::move(request), m_policy);
}

std::string serialize_run_request(const RunRequest& request)
{
    json::object body;
    body["source"] = request.source;
    body["timeout_s"] = request.timeout_s;
    body["image"] = request.image;
    body["output_limit_bytes"] = static_cast<std::uint64_t>(request.output_limit_bytes);
    if (request.files) {
        json::array inputs;
        for (const FileContent& input : request.files->inputs) {
            inputs.push_back(json::object{{"name", input.name}, {"base64", util::base64_encode(input.bytes)}});
        }
        body["files"] = json::object{{"inputs", std::move(inputs)}, {"outputs", request.files->outputs}};
    }
    return util::to_json_text(body);
}

}  // namespace pybox::proto
