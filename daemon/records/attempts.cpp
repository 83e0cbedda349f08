#include "daemon/records/attempts.hpp"

#include "common/api_error_codes.hpp"
#include "common/files.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <system_error>

namespace pybox::daemon {

namespace json = boost::json;

namespace {

constexpr std::size_t k_max_note_bytes = 4096;

std::string note_name(const std::string& run_id) { return run_id + ".json"; }

std::optional<AttemptNote> parse_note(std::string_view text)
{
    boost::system::error_code ec;
    const json::value document = json::parse(text, ec);
    const json::object* object = ec ? nullptr : document.if_object();
    if (object == nullptr) return std::nullopt;
    AttemptNote note;
    const auto* run = object->if_contains("run_id");
    const auto* owner = object->if_contains("installation_id");
    const auto* created = object->if_contains("created_at");
    const auto* expires = object->if_contains("expires_at");
    const auto* container = object->if_contains("container_id");
    if (!run || !run->is_string() || !owner || !owner->is_string() || !created || !created->is_string() ||
        !expires || !expires->is_int64() || !container || !container->is_string())
        return std::nullopt;
    note.run_id = run->as_string();
    note.installation_id = owner->as_string();
    note.created_at = created->as_string();
    note.expires_at = expires->as_int64();
    note.container_id = container->as_string();
    if (const auto* engine = object->if_contains("engine"); engine != nullptr) {
        if (!engine->is_string()) return std::nullopt;
        note.engine_id = engine->as_string();
    }
    if (const auto* user = object->if_contains("owner_uid"); user != nullptr) {
        if (!user->is_int64() || user->get_int64() < 0 || user->get_int64() > UINT32_MAX) return std::nullopt;
        note.owner_uid = static_cast<std::uint32_t>(user->get_int64());
    }
    return note;
}

}  // namespace

Expected<void> AttemptLog::write(const AttemptNote& note) const
{
    json::object document{{"run_id", note.run_id},
                          {"installation_id", note.installation_id},
                          {"created_at", note.created_at},
                          {"expires_at", note.expires_at},
                          {"container_id", note.container_id},
                          {"engine", note.engine_id}};
    if (note.owner_uid) document["owner_uid"] = *note.owner_uid;
    return write_file_atomic(m_paths.attempts_dir() / note_name(note.run_id), json::serialize(document) + "\n");
}

Expected<void> AttemptLog::remove(const std::string& run_id) const
{
    std::error_code ec;
    std::filesystem::remove(m_paths.attempts_dir() / note_name(run_id), ec);
    if (ec) return make_error(api_error::k_file_unwritable, "Cannot delete the attempt note of run " + run_id + ": " + ec.message() + ".");
    return {};
}

std::vector<AttemptNote> AttemptLog::list() const
{
    std::vector<AttemptNote> notes;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(m_paths.attempts_dir(), ec)) {
        const auto name = entry.path().filename().string();
        if (!entry.is_regular_file() || !name.ends_with(".json")) continue;
        const std::string run_id = name.substr(0, name.size() - 5);
        auto text = read_file_capped(entry.path(), k_max_note_bytes);
        std::optional<AttemptNote> note = text ? parse_note(*text) : std::nullopt;
        if (!note || note->run_id != run_id) {
            AttemptNote damaged;
            damaged.run_id = run_id;
            damaged.readable = false;
            notes.push_back(damaged);
        } else {
            notes.push_back(*note);
        }
    }
    return notes;
}

RunsInProgress::Mark::Mark(RunsInProgress* runs, std::string run_id, State state)
    : m_runs(runs), m_run_id(std::move(run_id))
{
    if (m_runs != nullptr) m_runs->m_runs[m_run_id] = state;
}

void RunsInProgress::Mark::taken()
{
    if (m_runs != nullptr) m_runs->m_runs[m_run_id] = State::running;
}

RunsInProgress::Mark::~Mark()
{
    if (m_runs != nullptr) m_runs->m_runs.erase(m_run_id);
}

}  // namespace pybox::daemon
