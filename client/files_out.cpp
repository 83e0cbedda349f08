#include "client/files_out.hpp"

#include "common/api_error_codes.hpp"
#include "common/files.hpp"
#include "common/limits.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

namespace pybox::client {

namespace {

namespace fs = std::filesystem;
using Outcome = OutputFileResult::Outcome;

constexpr std::string_view k_temporary_prefix = ".pybox-";
constexpr std::string_view k_temporary_suffix = ".tmp";

Error unusable(std::string message)
{
    return make_error("output_folder_invalid", std::move(message));
}

// Writes one output below `dir`; `dir` is never left: every folder on the way is opened without
// following a link.
OutputFileResult write_output_file(const Folder& dir, const proto::FileContent& output, bool force)
{
    OutputFileResult result;
    result.name = output.name;
    const auto failed = [&result](std::string reason) {
        result.reason = std::move(reason);
        return result;
    };
    if (auto problem = proto::file_name_problem(output.name); !problem.empty()) {
        return failed(std::move(problem));
    }
    std::optional<Folder> below;
    std::string_view rest = output.name;
    for (std::size_t slash = rest.find('/'); slash != std::string_view::npos; slash = rest.find('/')) {
        auto next = (below ? *below : dir).open_or_make_folder(std::string(rest.substr(0, slash)));
        if (!next) {
            return failed(next.error().message);
        }
        below = std::move(*next);
        rest.remove_prefix(slash + 1);
    }
    const Folder& parent = below ? *below : dir;
    const std::string leaf(rest);
    switch (parent.entry_kind(leaf)) {
    case Folder::EntryKind::folder:
        return failed("A folder of that name is there; PyBox never replaces a folder.");
    case Folder::EntryKind::symbolic_link:
        return failed("A symbolic link of that name is there; PyBox never follows or replaces a link.");
    case Folder::EntryKind::other:
        return failed("Something other than a regular file has that name; PyBox replaces only regular files.");
    case Folder::EntryKind::regular_file:
        if (!force) {
            result.outcome = Outcome::kept_existing;
            return result;
        }
        break;
    case Folder::EntryKind::missing:
        break;
    }
    auto temporary = parent.write_new_file(k_temporary_prefix, k_temporary_suffix, output.bytes);
    if (!temporary) {
        return failed(temporary.error().message);
    }
    // Without force a name taken meanwhile is kept too: the rename never replaces it.
    auto renamed = parent.rename_entry(*temporary, leaf, force);
    if (!renamed || !*renamed) {
        parent.remove_file(*temporary);
    }
    if (!renamed) {
        return failed(renamed.error().message);
    }
    if (!*renamed) {
        result.outcome = Outcome::kept_existing;
        return result;
    }
    result.outcome = Outcome::written;
    result.bytes = output.bytes.size();
    return result;
}

// DIR/NAME as the user will recognize it; NAME comes from the box, so it is made printable.
std::string shown_target(const fs::path& dir, const std::string& name)
{
    std::string shown = dir.string();
    if (!shown.empty() && shown.back() != '/') {
        shown += '/';
    }
    return shown + util::printable_excerpt(name, limits::k_max_file_name_bytes);
}

}  // namespace

Expected<void> check_output_folder(const std::filesystem::path& dir)
{
    auto folder = Folder::open(dir);
    if (!folder && folder.error().code == api_error::k_file_missing) {
        return unusable("The output folder " + dir.string() + " does not exist; make it first.");
    }
    if (!folder) {
        return unusable("The output folder cannot be used: " + folder.error().message);
    }
    auto probe = folder->write_new_file(k_temporary_prefix, k_temporary_suffix, "");
    if (!probe) {
        return unusable("The output folder cannot be written to: " + probe.error().message);
    }
    folder->remove_file(*probe);
    return {};
}

bool OutputWriteReport::any_failed() const
{
    return std::any_of(files.begin(), files.end(),
                       [](const OutputFileResult& file) { return file.outcome == Outcome::failed; });
}

OutputWriteReport write_output_files(const std::filesystem::path& dir, const std::vector<proto::FileContent>& outputs,
                                     bool force)
{
    OutputWriteReport report;
    auto folder = Folder::open(dir);
    for (const proto::FileContent& output : outputs) {
        if (folder) {
            report.files.push_back(write_output_file(*folder, output, force));
        } else {
            report.files.push_back({output.name, Outcome::failed, 0, folder.error().message});
        }
    }
    return report;
}

std::string render_output_report(const std::filesystem::path& dir, const OutputWriteReport& report)
{
    std::string text;
    for (const OutputFileResult& file : report.files) {
        const std::string target = shown_target(dir, file.name);
        switch (file.outcome) {
        case Outcome::written:
            text += "pybox: wrote " + target + " (" + std::to_string(file.bytes) + (file.bytes == 1 ? " byte)\n" : " bytes)\n");
            break;
        case Outcome::kept_existing:
            text += "pybox: kept existing " + target + ": use --force to replace it\n";
            break;
        case Outcome::failed:
            text += "pybox: could not write " + target + ": " + util::printable_excerpt(file.reason, 1024) + "\n";
            break;
        }
    }
    return text;
}

}  // namespace pybox::client
