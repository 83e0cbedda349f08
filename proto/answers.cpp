#include "proto/answers.hpp"

#include "proto/read_answer.hpp"
#include "util/json_reader.hpp"
#include "util/text.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <utility>

namespace pybox::proto {

namespace json = boost::json;

namespace {

template <class T>
json::value optional_to_json(const std::optional<T>& value)
{
    return value ? json::value(*value) : json::value(nullptr);
}

json::array strings_to_json(const std::vector<std::string>& strings)
{
    return json::array(strings.begin(), strings.end());
}

std::optional<int> optional_small_int(util::ObjectReader& reader, std::string_view key)
{
    std::optional<int> value;
    reader.small_int(key, &value);
    return value;
}

json::array problems_to_json(const std::vector<EngineProblem>& problems)
{
    json::array array;
    for (const auto& problem : problems)
        array.push_back(json::object{{"check", problem.check}, {"message", problem.message}});
    return array;
}

std::vector<EngineProblem> read_problems(util::ObjectReader& reader)
{
    std::vector<EngineProblem> problems;
    for (auto& problem : reader.objects("problems")) {
        problems.push_back({problem.string("check"), problem.string("message")});
        problem.finish();
    }
    return problems;
}

json::object pool_engine_object(const PoolEngine& engine)
{
    return {{"id", engine.id},
            {"address", engine.address},
            {"takes_runs", engine.takes_runs},
            {"running", engine.running},
            {"verified", engine.verified},
            {"busy", engine.busy},
            {"problems", problems_to_json(engine.problems)},
            {"notes", strings_to_json(engine.notes)},
            {"api_version", optional_to_json(engine.api_version)}};
}

PoolEngine read_pool_engine(util::ObjectReader& reader)
{
    PoolEngine engine;
    engine.id = reader.string("id");
    engine.address = reader.string("address");
    engine.takes_runs = reader.boolean("takes_runs");
    engine.running = reader.boolean("running");
    engine.verified = reader.boolean("verified");
    engine.busy = reader.uint64("busy");
    engine.problems = read_problems(reader);
    engine.notes = reader.strings("notes");
    engine.api_version = reader.optional_string("api_version");
    return engine;
}

json::object engine_status_object(const EngineStatus& status)
{
    json::object object{{"running", status.running},
            {"verified", status.verified},
            {"engine_socket", status.engine_socket},
            {"private", status.is_private},
            {"runtime", status.runtime},
            {"problems", problems_to_json(status.problems)},
            {"notes", strings_to_json(status.notes)},
            {"pid", optional_to_json(status.pid)},
            {"api_version", optional_to_json(status.api_version)}};
    if (!status.engines.empty()) {
        json::array engines;
        for (const auto& engine : status.engines) engines.push_back(pool_engine_object(engine));
        object["engines"] = std::move(engines);
    }
    return object;
}

EngineStatus read_engine_status(util::ObjectReader& reader)
{
    EngineStatus status;
    status.running = reader.boolean("running");
    status.verified = reader.boolean("verified");
    status.engine_socket = reader.string("engine_socket");
    status.is_private = reader.boolean("private");
    status.runtime = reader.string("runtime");
    status.problems = read_problems(reader);
    status.notes = reader.strings("notes");
    status.pid = optional_small_int(reader, "pid");
    status.api_version = reader.optional_string("api_version");
    if (reader.if_present("engines") != nullptr) {
        for (auto& engine : reader.objects("engines")) {
            status.engines.push_back(read_pool_engine(engine));
            engine.finish();
        }
    }
    return status;
}

// A key written only in some answers: absent and null both read as nullopt.
template <class T, class Read>
std::optional<T> when_present(util::ObjectReader& reader, std::string_view key, Read read)
{
    const auto* value = reader.if_present(key);
    if (value == nullptr || value->is_null()) return std::nullopt;
    return read(key);
}

}  // namespace

json::value to_json(const PingAnswer& answer)
{
    return json::object{{"ok", answer.ok}, {"daemon", answer.daemon}, {"version", answer.version}, {"api", answer.api}};
}

json::value to_json(const EngineStatus& answer) { return engine_status_object(answer); }

json::value to_json(const EngineStartAnswer& answer)
{
    auto object = engine_status_object(answer);
    object["started"] = answer.started;
    object["seconds"] = answer.seconds;
    return object;
}

json::value to_json(const EngineStopAnswer& answer)
{
    return json::object{{"running", answer.running},         {"stopped", answer.stopped},
                        {"forced", answer.forced},           {"engine_socket", answer.engine_socket},
                        {"seconds", answer.seconds},         {"notes", strings_to_json(answer.notes)}};
}

json::value to_json(const SetupAnswer& answer)
{
    json::array images;
    for (const auto& image : answer.images) {
        json::object entry{{"name", image.name},
                           {"image_id", image.image_id},
                           {"recipe_sha256", image.recipe_sha256},
                           {"status", image.status},
                           {"seconds", image.seconds},
                           {"tar_sha256", image.tar_sha256},
                           {"lock_refreshed", image.lock_refreshed}};
        if (image.previous_image_id) {
            entry["previous_image_id"] = *image.previous_image_id;
            entry["previous_image_removed"] = optional_to_json(image.previous_image_removed);
        }
        images.push_back(std::move(entry));
    }
    return json::object{{"images", std::move(images)}};
}

json::value to_json(const SetupProgress& answer)
{
    return json::object{{"building", optional_to_json(answer.building)},
                        {"phase", answer.phase},
                        {"downloaded_packages", answer.downloaded_packages},
                        {"downloaded_bytes", answer.downloaded_bytes},
                        {"seconds", answer.seconds}};
}

json::value to_json(const ImageList& answer)
{
    json::array images;
    for (const auto& image : answer.images) {
        json::object entry{{"name", image.name},
                           {"image_id", image.image_id},
                           {"recipe_sha256", image.recipe_sha256},
                           {"built_at", image.built_at},
                           {"tar_sha256", image.tar_sha256},
                           {"present", optional_to_json(image.present)}};
        if (image.present_unknown_because) entry["present_unknown_because"] = *image.present_unknown_because;
        images.push_back(std::move(entry));
    }
    return json::object{{"images", std::move(images)}};
}

json::value to_json(const AttemptsAnswer& answer)
{
    json::array unsettled;
    for (const auto& note : answer.unsettled) {
        json::object item{{"run_id", note.run_id},
                          {"created_at", note.created_at},
                          {"expires_at", note.expires_at},
                          {"container_id", note.container_id},
                          {"readable", note.readable},
                          {"in_progress", note.in_progress},
                          {"warm", note.warm}};
        if (note.owner_uid) item["owner_uid"] = *note.owner_uid;
        unsettled.push_back(std::move(item));
    }
    json::array settled;
    for (const auto& entry : answer.settled) settled.push_back(to_json(entry));
    return json::object{{"unsettled", std::move(unsettled)},
                        {"unsettled_total", answer.unsettled_total},
                        {"settled", std::move(settled)},
                        {"damaged_lines", answer.damaged_lines}};
}

json::value to_json(const DoctorAnswer& answer)
{
    json::array checks;
    for (const auto& check : answer.checks)
        checks.push_back(json::object{
            {"name", check.name}, {"verdict", check.verdict}, {"detail", check.detail}, {"fix", check.fix}});
    return json::object{{"checks", std::move(checks)}};
}

json::value to_json(const ReceiptList& answer)
{
    json::array receipts;
    for (const auto& kept : answer.receipts)
        receipts.push_back(json::object{{"run_id", kept.run_id},
                                        {"created_at", kept.created_at},
                                        {"image", kept.image},
                                        {"exit_code", optional_to_json(kept.exit_code)},
                                        {"mechanism", kept.mechanism},
                                        {"signed", kept.signed_receipt},
                                        {"bytes", kept.bytes},
                                        {"owner_uid", kept.owner_uid}});
    return json::object{{"receipts", std::move(receipts)},
                        {"max_receipts", answer.max_receipts},
                        {"max_bytes", answer.max_bytes}};
}

json::value to_json(const ErrorAnswer& answer)
{
    return json::object{
        {"error", json::object{{"code", answer.code}, {"message", answer.message}, {"retryable", answer.retryable}}}};
}

Expected<PingAnswer> ping_answer_from_json(const json::value& document, util::ReadMode mode)
{
    return read_answer<PingAnswer>(document, mode, "ping answer", [](util::ObjectReader& reader) {
        return PingAnswer{reader.boolean("ok"), reader.string("daemon"), reader.string("version"), reader.string("api")};
    });
}

Expected<EngineStatus> engine_status_from_json(const json::value& document, util::ReadMode mode)
{
    return read_answer<EngineStatus>(document, mode, "engine status", read_engine_status);
}

Expected<EngineStartAnswer> engine_start_from_json(const json::value& document, util::ReadMode mode)
{
    return read_answer<EngineStartAnswer>(document, mode, "engine start answer", [](util::ObjectReader& reader) {
        EngineStartAnswer answer{read_engine_status(reader)};
        answer.started = reader.boolean("started");
        answer.seconds = reader.number("seconds");
        return answer;
    });
}

Expected<EngineStopAnswer> engine_stop_from_json(const json::value& document, util::ReadMode mode)
{
    return read_answer<EngineStopAnswer>(document, mode, "engine stop answer", [](util::ObjectReader& reader) {
        EngineStopAnswer answer;
        answer.running = reader.boolean("running");
        answer.stopped = reader.boolean("stopped");
        answer.forced = reader.boolean("forced");
        answer.engine_socket = reader.string("engine_socket");
        answer.seconds = reader.number("seconds");
        answer.notes = reader.strings("notes");
        return answer;
    });
}

Expected<SetupAnswer> setup_answer_from_json(const json::value& document, util::ReadMode mode)
{
    return read_answer<SetupAnswer>(document, mode, "setup answer", [mode](util::ObjectReader& reader) {
        SetupAnswer answer;
        for (auto& item : reader.objects("images")) {
            SetupImage image;
            image.name = item.string("name");
            image.image_id = item.string("image_id");
            image.recipe_sha256 = item.string("recipe_sha256");
            image.status = item.string("status");
            if (mode == util::ReadMode::strict && image.status != k_setup_built && image.status != k_setup_up_to_date &&
                image.status != k_setup_from_cache)
                item.fail("status", "is not a known value");
            image.seconds = item.number("seconds");
            image.tar_sha256 = item.string("tar_sha256");
            image.lock_refreshed = item.boolean("lock_refreshed");
            image.previous_image_id =
                when_present<std::string>(item, "previous_image_id", [&](auto key) { return item.string(key); });
            image.previous_image_removed =
                when_present<bool>(item, "previous_image_removed", [&](auto key) { return item.boolean(key); });
            if (image.previous_image_removed && !image.previous_image_id)
                item.fail("previous_image_removed", "comes only with previous_image_id");
            item.finish();
            answer.images.push_back(std::move(image));
        }
        return answer;
    });
}

Expected<SetupProgress> setup_progress_from_json(const json::value& document, util::ReadMode mode)
{
    return read_answer<SetupProgress>(document, mode, "setup progress", [](util::ObjectReader& reader) {
        SetupProgress answer;
        answer.building = reader.optional_string("building");
        answer.phase = reader.string("phase");
        answer.downloaded_packages = reader.uint64("downloaded_packages");
        answer.downloaded_bytes = reader.uint64("downloaded_bytes");
        answer.seconds = reader.number("seconds");
        return answer;
    });
}

Expected<ImageList> image_list_from_json(const json::value& document, util::ReadMode mode)
{
    return read_answer<ImageList>(document, mode, "image list", [](util::ObjectReader& reader) {
        ImageList answer;
        for (auto& item : reader.objects("images")) {
            ImageListEntry image;
            image.name = item.string("name");
            image.image_id = item.string("image_id");
            image.recipe_sha256 = item.string("recipe_sha256");
            image.built_at = item.string("built_at");
            image.tar_sha256 = item.string("tar_sha256");
            const auto& present = item.any("present");
            if (present.is_bool())
                image.present = present.get_bool();
            else if (!present.is_null())
                item.fail("present", "must be true, false or null");
            image.present_unknown_because = when_present<std::string>(
                item, "present_unknown_because", [&](auto key) { return item.string(key); });
            item.finish();
            answer.images.push_back(std::move(image));
        }
        return answer;
    });
}

Expected<AttemptsAnswer> attempts_answer_from_json(const json::value& document, util::ReadMode mode)
{
    return read_answer<AttemptsAnswer>(document, mode, "attempts answer", [](util::ObjectReader& reader) {
        AttemptsAnswer answer;
        for (auto& item : reader.objects("unsettled")) {
            UnsettledAttempt note;
            note.run_id = item.string("run_id");
            note.created_at = item.string("created_at");
            note.expires_at = item.int64("expires_at");
            note.container_id = item.string("container_id");
            note.readable = item.boolean("readable");
            note.in_progress = item.boolean("in_progress");
            // A daemon older than warm boxes does not send the key.
            if (item.mode() == util::ReadMode::strict || item.if_present("warm") != nullptr) note.warm = item.boolean("warm");
            if (item.if_present("owner_uid") != nullptr) note.owner_uid = item.uint32("owner_uid");
            item.finish();
            answer.unsettled.push_back(std::move(note));
        }
        answer.unsettled_total = reader.uint64("unsettled_total");
        for (auto& item : reader.objects("settled")) {
            SettledAttempt entry;
            entry.run_id = item.string("run_id");
            entry.created_at = item.string("created_at");
            entry.expires_at = item.int64("expires_at");
            entry.container_id = item.string("container_id");
            entry.settled_at = item.string("settled_at");
            entry.box = item.string("box");
            if (item.mode() == util::ReadMode::strict && entry.box != k_box_removed_by_sweep && entry.box != k_box_not_found)
                item.fail("box", "must be REMOVED_BY_SWEEP or NOT_FOUND");
            entry.box_removed_at = item.optional_string("box_removed_at");
            entry.run_parent_released = item.boolean("run_parent_released");
            entry.errors = item.strings("errors");
            if (item.if_present("owner_uid") != nullptr) entry.owner_uid = item.uint32("owner_uid");
            if (item.if_present("receipt") != nullptr) entry.receipt = item.string("receipt");
            item.finish();
            answer.settled.push_back(std::move(entry));
        }
        answer.damaged_lines = reader.uint64("damaged_lines");
        return answer;
    });
}

Expected<DoctorAnswer> doctor_answer_from_json(const json::value& document, util::ReadMode mode)
{
    return read_answer<DoctorAnswer>(document, mode, "doctor answer", [mode](util::ObjectReader& reader) {
        DoctorAnswer answer;
        for (auto& item : reader.objects("checks")) {
            DoctorCheck check{item.string("name"), item.string("verdict"), item.string("detail"), item.string("fix")};
            if (mode == util::ReadMode::strict && check.verdict != k_verdict_ok && check.verdict != k_verdict_problem &&
                check.verdict != k_verdict_unknown)
                item.fail("verdict", "is not a known value");
            item.finish();
            answer.checks.push_back(std::move(check));
        }
        return answer;
    });
}

Expected<ReceiptList> receipt_list_from_json(const json::value& document, util::ReadMode mode)
{
    return read_answer<ReceiptList>(document, mode, "receipt list", [](util::ObjectReader& reader) {
        ReceiptList answer;
        for (auto& item : reader.objects("receipts")) {
            KeptReceipt kept;
            kept.run_id = item.string("run_id");
            kept.created_at = item.string("created_at");
            kept.image = item.string("image");
            kept.exit_code = item.optional_int64("exit_code");
            kept.mechanism = item.string("mechanism");
            kept.signed_receipt = item.boolean("signed");
            kept.bytes = item.uint64("bytes");
            kept.owner_uid = item.uint32("owner_uid");
            item.finish();
            answer.receipts.push_back(std::move(kept));
        }
        answer.max_receipts = reader.uint64("max_receipts");
        answer.max_bytes = reader.uint64("max_bytes");
        return answer;
    });
}

Expected<ErrorAnswer> error_answer_from_json(const json::value& document, util::ReadMode mode)
{
    return read_answer<ErrorAnswer>(document, mode, "error answer", [](util::ObjectReader& reader) {
        auto error = reader.object("error");
        ErrorAnswer answer{error.string("code"), error.string("message"), error.boolean("retryable")};
        error.finish();
        return answer;
    });
}

}  // namespace pybox::proto
