#include "daemon/run/installation.hpp"

#include "common/files.hpp"
#include "common/ids.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace pybox::daemon {

namespace json = boost::json;

namespace {

bool is_hex_id(std::string_view text)
{
    return text.size() == 32 && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

}  // namespace

Expected<std::string> load_or_create_installation_id(const RuntimePaths& paths)
{
    const auto file = paths.installation_file();
    auto existing = read_file_capped(file, 4096);
    if (existing) {
        boost::system::error_code ec;
        const json::value document = json::parse(*existing, ec);
        const json::object* object = ec ? nullptr : document.if_object();
        const json::value* id = object ? object->if_contains("installation_id") : nullptr;
        if (id == nullptr || !id->is_string() || !is_hex_id(id->as_string()))
            return make_error("installation_corrupt",
                              file.string() + " is damaged; move it away and PyBox will make a new one "
                                              "(boxes labelled with the old id are then left to you).");
        return std::string(id->as_string());
    }
    if (existing.error().code != "file_missing") return existing.error();
    std::string id = random_id_128();
    if (auto written = write_file_atomic(file, json::serialize(json::object{{"installation_id", id}}) + "\n");
        !written)
        return written.error();
    return id;
}

}  // namespace pybox::daemon
