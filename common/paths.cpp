#include "common/paths.hpp"

#include "common/api_error_codes.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <system_error>

namespace pybox {

Expected<RuntimePaths> RuntimePaths::from_environment()
{
    if (const char* home = std::getenv("PYBOX_HOME"); home != nullptr && *home != '\0') {
        std::filesystem::path root(home);
        if (!root.is_absolute())
            return make_error(api_error::k_invalid_runtime_dir, "PYBOX_HOME must be an absolute path (got \"" +
                                                         std::string(home) + "\").");
        return RuntimePaths(root.lexically_normal());
    }
    const char* user_home = std::getenv("HOME");
    if (user_home == nullptr || *user_home != '/')
        return make_error(api_error::k_invalid_runtime_dir,
                          "HOME is not set to an absolute path; set HOME or PYBOX_HOME.");
    return RuntimePaths(std::filesystem::path(user_home) / ".pybox" / "runtime");
}

Expected<std::filesystem::path> system_daemon_socket()
{
    const char* named = std::getenv("PYBOX_SYSTEM_SOCKET");
    if (named == nullptr || *named == '\0') return std::filesystem::path(k_system_socket);
    std::filesystem::path socket(named);
    if (!socket.is_absolute())
        return make_error(api_error::k_invalid_runtime_dir,
                          "PYBOX_SYSTEM_SOCKET must be an absolute path (got \"" + std::string(named) + "\").");
    return socket.lexically_normal();
}

Expected<std::filesystem::path> client_daemon_socket()
{
    const char* home = std::getenv("PYBOX_HOME");
    const bool named = home != nullptr && *home != '\0';
    auto own = RuntimePaths::from_environment();
    if (named || (own && std::filesystem::exists(own->daemon_socket()))) {
        if (!own) return own.error();
        return own->daemon_socket();
    }
    auto system = system_daemon_socket();
    if (system && std::filesystem::exists(*system)) return *system;
    if (!own) return own.error();
    return own->daemon_socket();
}

Expected<void> ensure_private_dir(const std::filesystem::path& dir)
{
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
        return make_error(api_error::k_runtime_dir_unusable, "Cannot create " + dir.string() + ": " + ec.message() + ".");
    struct stat info{};
    if (::lstat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
        return make_error(api_error::k_runtime_dir_unusable, dir.string() + " is not a folder.");
    if (info.st_uid != ::geteuid())
        return make_error(api_error::k_runtime_dir_unusable,
                          dir.string() + " belongs to another user; PyBox keeps its files private.");
    if ((info.st_mode & 0777) != 0700 && ::chmod(dir.c_str(), 0700) != 0)
        return make_error(api_error::k_runtime_dir_unusable, "Cannot make " + dir.string() + " private (0700).");
    return {};
}

Expected<void> RuntimePaths::ensure_private() const
{
    for (const auto& dir : {m_root, recipes_dir(), attempts_dir(), receipts_dir(), engine_dir(), build_dir()}) {
        if (auto made = ensure_private_dir(dir); !made)
            return made.error();
    }
    return {};
}

}  // namespace pybox
