// Where PyBox keeps its files. Everything lives under one runtime folder:
// $PYBOX_HOME if set, else ~/.pybox/runtime. The folder and its subfolders are 0700.
#pragma once

#include "common/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace pybox {

class RuntimePaths {
public:
    // Resolves the runtime folder from the environment; does not touch the disk.
    static Expected<RuntimePaths> from_environment();
    explicit RuntimePaths(std::filesystem::path root) : m_root(std::move(root)) {}

    // Creates the runtime folder tree with mode 0700 and refuses one owned by another user
    // or writable by group/others.
    Expected<void> ensure_private() const;

    const std::filesystem::path& root() const { return m_root; }
    std::filesystem::path installation_file() const { return m_root / "installation.json"; }
    std::filesystem::path config_file() const { return m_root / "config.json"; }
    std::filesystem::path images_file() const { return m_root / "images.json"; }
    std::filesystem::path images_lock() const { return m_root / "images.lock"; }
    std::filesystem::path recipes_dir() const { return m_root / "recipes"; }
    std::filesystem::path attempts_dir() const { return m_root / "attempts"; }
    // The receipts the daemon issued, and the installation's key pair that signs them.
    std::filesystem::path receipts_dir() const { return m_root / "receipts"; }
    std::filesystem::path signing_key_file() const { return m_root / "signing_key.pem"; }
    std::filesystem::path public_key_file() const { return m_root / "signing_key.pub.pem"; }
    std::filesystem::path lifecycle_lock() const { return m_root / "lifecycle.lock"; }
    std::filesystem::path daemon_socket() const { return m_root / "pyboxd.sock"; }
    std::filesystem::path daemon_pid_file() const { return m_root / "pyboxd.pid"; }
    // A cluster engine's record of the images pushed to its registry
    // (daemon/registry/pushed_images.hpp), by the engine's id (engine_entry.hpp's is_engine_id);
    // the folder is made 0700 when the record is first written.
    std::filesystem::path pushed_images_file(std::string_view engine_id) const
    {
        return m_root / "pushed-images" / (std::string(engine_id) + ".json");
    }
    // The private engine's folder; daemon/vm names the files in it.
    std::filesystem::path engine_dir() const { return m_root / "engine"; }
    std::filesystem::path build_dir() const { return m_root / "build"; }

private:
    std::filesystem::path m_root;
};

// The system pyboxd (`pyboxd --system`, root's, serving the pybox group; docs/install.md): its
// socket, $PYBOX_SYSTEM_SOCKET when set to an absolute path, else k_system_socket; and its
// runtime folder unless $PYBOX_HOME names another.
inline constexpr const char* k_system_socket = "/run/pybox/pyboxd.sock";
inline constexpr const char* k_system_runtime = "/var/lib/pybox";
Expected<std::filesystem::path> system_daemon_socket();

// The socket `pybox` talks to: $PYBOX_HOME's when set; else the user's own daemon's
// (~/.pybox/runtime/pyboxd.sock) when that socket exists, else the system daemon's when that
// exists, else the user's own (whose absence the client then reports).
Expected<std::filesystem::path> client_daemon_socket();

// Creates `dir` (and its parents) and makes it 0700; refuses a folder that is not a folder or
// belongs to another user.
Expected<void> ensure_private_dir(const std::filesystem::path& dir);

}  // namespace pybox
