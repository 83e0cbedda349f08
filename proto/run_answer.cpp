#include "proto/run_answer.hpp"

#include "common/api_error_codes.hpp"
#include "common/limits.hpp"
#include "util/json_reader.hpp"
#include "util/json_writer.hpp"
#include "util/text.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace pybox::proto {

namespace json = boost::json;

namespace {

json::array outputs_to_json(const std::vector<FileContent>& files)
{
    json::array outputs;
    for (const FileContent& file : files) {
        outputs.push_back(json::object{{"name", file.name}, {"base64", util::base64_encode(file.bytes)}});
    }
    return outputs;
}

}  // namespace

std::string run_answer_text(const IssuedRunAnswer& answer)
{
    const IssuedReceipt& issued = answer.receipt;
    if (!issued.receipt().files) return issued.text();
    // As util::to_json_text writes {"receipt": ..., "outputs": [...]}: members in order, no space.
    std::string text = R"({"receipt":)";
    text += issued.text();
    text += R"(,"outputs":)";
    text += util::to_json_text(outputs_to_json(answer.outputs));
    text += "}";
    return text;
}

json::value to_json(const RunAnswer& answer)
{
    json::value receipt = receipt_to_json(answer.receipt);
    if (!answer.receipt.files) {
        return receipt;
    }
    return json::object{{"receipt", std::move(receipt)}, {"outputs", outputs_to_json(answer.outputs)}};
}

Expected<RunAnswer> run_answer_from_json(const json::value& document, util::ReadMode mode, bool moved_files)
{
    RunAnswer answer;
    if (!moved_files) {
        auto receipt = receipt_from_json(document, mode);
        if (!receipt) return receipt.error();
        answer.receipt = std::move(*receipt);
        return answer;
    }
    std::string error;
    util::ObjectReader root(document, "", error, mode);
    auto receipt = receipt_from_json(root.any("receipt"), mode);
    for (auto& item : root.objects("outputs")) {
        FileContent file{item.string("name"), {}};
        if (auto bytes = util::base64_decode(item.string("base64"))) {
            file.bytes = std::move(*bytes);
        } else {
            item.fail("base64", "is not valid base64");
        }
        item.finish();
        answer.outputs.push_back(std::move(file));
        if (answer.outputs.size() > limits::k_max_output_files) break;
    }
    root.finish();
    if (!receipt) return receipt.error();
    if (!error.empty()) return make_error(api_error::k_invalid_answer, "The run's answer is not valid: " + util::printable_excerpt(error, 200) + ".");
    auto checked = check_file_set(answer.outputs, {limits::k_max_output_files, limits::k_max_output_bytes}, api_error::k_invalid_answer,
                                  "output");
    if (!checked) return checked.error();
    answer.receipt = std::move(*receipt);
    return answer;
}

}  // namespace pybox::proto
