// Daemon: pyboxd's objects, wired into one io_context. It holds the runtime folder (its
// lifecycle lock, so one pyboxd per folder), reads config.json, keeps the receipts, and makes
// one PoolMember per engine (pool/pool_member.hpp: the local engine first, then config.json's
// "engines"), the pool's services when there are entries (pool/pool_services.hpp; without them
// the daemon serves the local engine directly), the warm boxes' keepers, the attempt records,
// the doctor, the repair loop and the socket server over all of them.
//
// run() writes the pid file, starts the server, the sweeps, the warm keepers and the pool's
// re-checks, logs where it listens and what the engines answer, and serves until SIGINT or
// SIGTERM; then runs in progress end with their boxes removed, the warm boxes are removed, and
// the pid file goes.
//
// Failure: start-up failures (another pyboxd on the runtime folder, an unreadable config.json,
// no recipes, a socket that cannot be made, ...) are said on stderr and end the process with
// status 1 (fail_to_start). Not copyable or movable. Single-threaded: everything runs on its
// io_context.
#pragma once

#include "common/files.hpp"
#include "common/paths.hpp"
#include "daemon/config/daemon_config.hpp"
#include "daemon/daemon_cli.hpp"
#include "daemon/doctor/doctor_service.hpp"
#include "daemon/images/image_registry.hpp"
#include "daemon/images/image_service.hpp"
#include "daemon/model/chat_completions_client.hpp"
#include "daemon/pool/pool_member.hpp"
#include "daemon/pool/pool_services.hpp"
#include "daemon/records/attempt_journal.hpp"
#include "daemon/records/attempt_records.hpp"
#include "daemon/records/attempts.hpp"
#include "daemon/records/receipt_store.hpp"
#include "daemon/repair/repair_service.hpp"
#include "daemon/run/issuing_run.hpp"
#include "daemon/run/warm_first_services.hpp"
#include "daemon/server/http_server.hpp"
#include "daemon/server/socket_activation.hpp"
#include "daemon/watcher/process_end_watcher.hpp"

#include <boost/asio/io_context.hpp>

#include <filesystem>
#include <list>
#include <memory>
#include <optional>
#include <string>

namespace pybox::daemon {

// Says why pyboxd cannot start, on stderr, and ends the process with status 1.
[[noreturn]] void fail_to_start(const Error& error);

// Where this daemon keeps its files and listens, and whom it serves (daemon_cli.hpp).
struct Serving {
    RuntimePaths paths;
    std::filesystem::path socket;
    HttpServerOptions server;
};

// The daemon's reader of the kernel's process ends, and what the runs on this host are given of it.
struct OpenedProcessEnds {
    std::unique_ptr<watcher::ProcessEndWatcher> watcher;  // null when it could not be opened
    ProcessEnds ends;
};

class Daemon {
public:
    // `activated`: the listening socket the service manager handed over, if any.
    Daemon(const DaemonOptions& options, std::optional<ActivatedSocket> activated);
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    // Serves until SIGINT or SIGTERM; the process's exit status.
    int run();

private:
    PoolMember& local() { return m_members.front(); }
    // The pool's run service, or the local engine's without config.json "engines".
    EngineRunService& engine_runs();
    HttpServerOptions server_options() const;
    void log_listening() const;

    DaemonOptions m_options;
    std::optional<ActivatedSocket> m_activated;
    Serving m_serving;
    FileLock m_lifecycle;
    config::DaemonConfig m_config;
    std::string m_installation_id;
    ReceiptStore m_receipts;

    net::io_context m_io;
    images::ImageRegistry m_registry;
    std::filesystem::path m_recipes_dir;
    std::string m_watch_script;
    // The kernel's record of process ends (proc connector), or why it is not read.
    OpenedProcessEnds m_process_ends;
    AttemptLog m_attempts;
    AttemptJournal m_journal;
    RunsInProgress m_runs_in_progress;
    std::list<PoolMember> m_members;  // the local engine first
    images::RecipeImageService m_image_service;
    std::unique_ptr<PoolServices> m_pool;  // null without config.json "engines"
    // Every run's receipt is signed and kept before it goes out, each repair step's too.
    IssuingRunService m_runs;
    // Warm boxes (config.json warm_boxes), per engine: made by the keepers run() starts, removed
    // before `vm stop` stops the engine, before an image is built or removed, and when the
    // daemon stops.
    WarmBoxes m_warm_boxes;
    WarmFirstEngineControl m_engine_control;
    WarmFirstImageService m_images;
    JournalAttemptRecords m_attempt_records;
    DoctorService m_doctor;
    // The repair loop asks the model of config.json, when it names one (docs/model.md).
    std::unique_ptr<model::ChatCompletionsClient> m_model;
    repair::ModelRepairService m_repair;
    HttpServer m_server;
};

}  // namespace pybox::daemon
