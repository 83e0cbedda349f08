#include "daemon/records/attempt_journal.hpp"

#include "common/api_error_codes.hpp"
#include "common/files.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <sys/stat.h>

namespace pybox::daemon {

namespace {

// Reads one journal file into `reading` (oldest first); a missing file holds nothing.
Expected<void> read_journal_file(const std::filesystem::path& file, std::size_t max_bytes, JournalReading& reading)
{
    auto tail = read_file_tail(file, max_bytes);
    if (!tail) return tail.error().code == api_error::k_file_missing ? Expected<void>() : Expected<void>(tail.error());
    std::string_view text = tail->bytes;
    if (tail->cut) {
        // The first line was cut by the cap: it is counted as damaged, not read.
        const auto end = text.find('\n');
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        ++reading.damaged_lines;
    }
    while (!text.empty()) {
        const auto end = text.find('\n');
        const std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        if (line.empty()) continue;
        if (auto entry = proto::parse_settled_attempt(line)) {
            reading.entries.push_back(std::move(*entry));
        } else {
            ++reading.damaged_lines;
        }
    }
    return {};
}

}  // namespace

Expected<void> AttemptJournal::append(const proto::SettledAttempt& entry) const
{
    const std::string line = boost::json::serialize(proto::to_json(entry));
    if (line.size() + 1 > m_max_file_bytes)
        return make_error(api_error::k_file_unwritable, "An attempt journal entry does not fit the journal's size limit.");
    const auto current = current_file();
    struct stat status {};
    if (::stat(current.c_str(), &status) == 0 &&
        static_cast<std::size_t>(status.st_size) + line.size() + 2 > m_max_file_bytes) {
        std::error_code ec;
        std::filesystem::rename(current, previous_file(), ec);
        if (ec)
            return make_error(api_error::k_file_unwritable,
                              "Cannot rotate the attempt journal " + current.string() + ": " + ec.message() + ".");
        if (auto synced = sync_folder(m_paths.attempts_dir()); !synced) return synced.error();
    }
    return append_line_synced(current, line);
}

Expected<JournalReading> AttemptJournal::read_recent(std::size_t max_entries) const
{
    JournalReading reading;
    for (const auto& file : {previous_file(), current_file()})
        if (auto read = read_journal_file(file, m_max_file_bytes, reading); !read) return read.error();
    std::reverse(reading.entries.begin(), reading.entries.end());
    if (reading.entries.size() > max_entries) reading.entries.resize(max_entries);
    return reading;
}

}  // namespace pybox::daemon
