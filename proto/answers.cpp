#include "proto/answers.hpp"

#include "proto/read_answer.hpp"
#include "util/described_json.hpp"

#include <boost/json/object.hpp>

namespace pybox::proto {

namespace json = boost::json;

namespace {

// A whole answer read from its description (answers.hpp), named `what` in its error.
template <class Answer>
Expected<Answer> read_described_answer(const json::value& document, util::ReadMode mode, std::string_view what)
{
    return read_answer<Answer>(document, mode, what, util::read_described<Answer>);
}

bool is_one_of(std::string_view value, std::initializer_list<std::string_view> known)
{
    for (const auto candidate : known)
        if (value == candidate) return true;
    return false;
}

}  // namespace

void check_json(util::ObjectReader& reader, const SetupImage& image)
{
    if (reader.mode() == util::ReadMode::strict && !is_one_of(image.status, {k_setup_built, k_setup_up_to_date, k_setup_from_cache, k_setup_pulled}))
        reader.fail("status", "is not a known value");
    if (image.previous_image_removed && !image.previous_image_id)
        reader.fail("previous_image_removed", "comes only with previous_image_id");
}

void check_json(util::ObjectReader& reader, const DoctorCheck& check)
{
    if (reader.mode() == util::ReadMode::strict && !is_one_of(check.verdict, {k_verdict_ok, k_verdict_problem, k_verdict_unknown}))
        reader.fail("verdict", "is not a known value");
}

json::value to_json(const PingAnswer& answer) { return util::described_to_json(answer); }
json::value to_json(const EngineStatus& answer) { return util::described_to_json(answer); }
json::value to_json(const EngineStartAnswer& answer) { return util::described_to_json(answer); }
json::value to_json(const EngineStopAnswer& answer) { return util::described_to_json(answer); }
json::value to_json(const SetupAnswer& answer) { return util::described_to_json(answer); }
json::value to_json(const SetupProgress& answer) { return util::described_to_json(answer); }
json::value to_json(const ImageList& answer) { return util::described_to_json(answer); }
json::value to_json(const AttemptsAnswer& answer) { return util::described_to_json(answer); }
json::value to_json(const DoctorAnswer& answer) { return util::described_to_json(answer); }
json::value to_json(const ReceiptList& answer) { return util::described_to_json(answer); }
json::value to_json(const ErrorAnswer& answer) { return json::object{{"error", util::described_to_json(answer)}}; }

Expected<PingAnswer> ping_answer_from_json(const json::value& document, util::ReadMode mode)
{
    return read_described_answer<PingAnswer>(document, mode, "ping answer");
}

Expected<EngineStatus> engine_status_from_json(const json::value& document, util::ReadMode mode)
{
    return read_described_answer<EngineStatus>(document, mode, "engine status");
}

Expected<EngineStartAnswer> engine_start_from_json(const json::value& document, util::ReadMode mode)
{
    return read_described_answer<EngineStartAnswer>(document, mode, "engine start answer");
}

Expected<EngineStopAnswer> engine_stop_from_json(const json::value& document, util::ReadMode mode)
{
    return read_described_answer<EngineStopAnswer>(document, mode, "engine stop answer");
}

Expected<SetupAnswer> setup_answer_from_json(const json::value& document, util::ReadMode mode)
{
    return read_described_answer<SetupAnswer>(document, mode, "setup answer");
}

Expected<SetupProgress> setup_progress_from_json(const json::value& document, util::ReadMode mode)
{
    return read_described_answer<SetupProgress>(document, mode, "setup progress");
}

Expected<ImageList> image_list_from_json(const json::value& document, util::ReadMode mode)
{
    return read_described_answer<ImageList>(document, mode, "image list");
}

Expected<AttemptsAnswer> attempts_answer_from_json(const json::value& document, util::ReadMode mode)
{
    return read_described_answer<AttemptsAnswer>(document, mode, "attempts answer");
}

Expected<DoctorAnswer> doctor_answer_from_json(const json::value& document, util::ReadMode mode)
{
    return read_described_answer<DoctorAnswer>(document, mode, "doctor answer");
}

Expected<ReceiptList> receipt_list_from_json(const json::value& document, util::ReadMode mode)
{
    return read_described_answer<ReceiptList>(document, mode, "receipt list");
}

Expected<ErrorAnswer> error_answer_from_json(const json::value& document, util::ReadMode mode)
{
    return read_answer<ErrorAnswer>(document, mode, "error answer", [](util::ObjectReader& reader) {
        auto error = reader.object("error");
        auto answer = util::read_described<ErrorAnswer>(error);
        error.finish();
        return answer;
    });
}

}  // namespace pybox::proto
