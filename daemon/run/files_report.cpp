#include "daemon/run/files_report.hpp"

#include "common/limits.hpp"
#include "common/sha256.hpp"
#include "proto/request_json.hpp"
#include "util/json_reader.hpp"
#include "util/text.hpp"

#include <algorithm>

namespace pybox::daemon {

namespace {

constexpr std::size_t k_max_helper_errors = 16;
constexpr std::size_t k_max_shown_name_bytes = 255;
constexpr std::size_t k_max_error_bytes = 1024;

std::vector<proto::FileRecord> records_of(const std::vector<proto::FileContent>& files)
{
    std::vector<proto::FileRecord> records;
    for (const auto& file : files) {
        records.push_back(proto::FileRecord{file.name, file.bytes.size(), sha256_hex(file.bytes)});
    }
    return records;
}

// Reads the report into `outcome`; the first problem, or "" when it is sound.
std::string read_report(std::string_view text, const std::vector<proto::FileRecord>& sent, FilesOutcome& outcome)
{
    auto document = proto::parse_request_json(text);
    if (!document) {
        return document.error().message;
    }
    std::string error;
    util::ObjectReader root(*document, "", error, util::ReadMode::strict);
    std::vector<proto::FileRecord> placed;
    for (auto& item : root.objects("inputs")) {
        placed.push_back(proto::FileRecord{item.string("name"), item.uint64("bytes"), item.string("sha256")});
        item.finish();
    }
    if (error.empty() && placed != sent) {
        return "its inputs are not the ones sent";
    }
    for (auto& item : root.objects("outputs")) {
        proto::FileContent file{item.string("name"), {}};
        const auto declared_bytes = item.uint64("bytes");
        const auto declared_sha = item.string("sha256");
        if (auto bytes = util::base64_decode(item.string("base64"))) {
            file.bytes = std::move(*bytes);
        } else {
            item.fail("base64", "is not valid base64");
        }
        if (error.empty() && (file.bytes.size() != declared_bytes || sha256_hex(file.bytes) != declared_sha)) {
            item.fail("sha256", "does not match the file's bytes");
        }
        item.finish();
        outcome.record.outputs.push_back(proto::FileRecord{file.name, declared_bytes, declared_sha});
        outcome.outputs.push_back(std::move(file));
        if (!error.empty() || outcome.outputs.size() > limits::k_max_output_files) {
            break;
        }
    }
    for (auto& item : root.objects("skipped")) {
        proto::SkippedFile skipped{item.string("name"), item.string("reason")};
        item.finish();
        if (std::find(std::begin(k_skip_reasons), std::end(k_skip_reasons), skipped.reason) == std::end(k_skip_reasons)) {
            root.fail("skipped", "holds an unknown reason");
        }
        skipped.name = util::printable_excerpt(skipped.name, k_max_shown_name_bytes);
        outcome.record.skipped.push_back(std::move(skipped));
    }
    outcome.record.skipped_unlisted = root.uint64("skipped_unlisted");
    auto helper_errors = root.strings("errors");
    root.finish();
    if (!error.empty()) {
        return error;
    }
    if (outcome.record.skipped.size() > k_max_listed_skipped || helper_errors.size() > k_max_helper_errors) {
        return "it lists more than the helper ever does";
    }
    auto outputs_ok = proto::check_file_set(outcome.outputs, {limits::k_max_output_files, limits::k_max_output_bytes},
                                            "files_report_invalid", "output");
    if (!outputs_ok) {
        return outputs_ok.error().message;
    }
    for (auto& helper_error : helper_errors) {
        outcome.record.errors.push_back(util::printable_excerpt(helper_error, k_max_error_bytes));
    }
    return "";
}

}  // namespace

FilesOutcome read_files_report(const FilesReportEvidence& evidence, const proto::RunRequest::Files& sent,
                               const std::string& why_missing)
{
    FilesOutcome outcome;
    outcome.record.source = "inputs: what the daemon sent; the rest: the files helper's report, read after the "
                            "run's marker on the box's stdout";
    outcome.record.working_folder = proto::k_box_working_folder;
    outcome.record.output_folder = proto::k_box_output_folder;
    const auto sent_records = records_of(sent.inputs);
    std::string problem;
    if (!evidence.report) {
        problem = why_missing;
    } else if (evidence.report_truncated) {
        problem = "The files helper's report was larger than " + std::to_string(k_max_files_report_bytes) +
                  " bytes; no output file was kept.";
    } else if (auto why = read_report(*evidence.report, sent_records, outcome); !why.empty()) {
        problem = "The files helper's report cannot be read (" + util::printable_excerpt(why, 200) +
                  "); no output file was kept.";
    }
    outcome.record.inputs = sent_records;
    if (!problem.empty()) {
        FilesOutcome failed;
        failed.record = std::move(outcome.record);
        failed.record.outputs.clear();
        failed.record.skipped.clear();
        failed.record.skipped_unlisted = 0;
        failed.record.errors = {problem};
        return failed;
    }
    if (!sent.outputs) {  // the client asked for none: listed, not returned
        outcome.outputs.clear();
    }
    return outcome;
}

}  // namespace pybox::daemon
