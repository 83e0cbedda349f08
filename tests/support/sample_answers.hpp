// Answers of the socket API with every key set, optional ones included: for the answers' tests
// and the check of docs/api.md.
#pragma once

#include "proto/answers.hpp"

namespace pybox::test {

using proto::EngineStartAnswer;
using proto::ImageList;
using proto::SetupAnswer;
using proto::SetupImage;

inline EngineStartAnswer sample_start()
{
    EngineStartAnswer answer;
    answer.running = true;
    answer.engine_socket = "/r/engine/docker.sock";
    answer.is_private = true;
    answer.runtime = "runc";
    answer.problems = {{"images", "run pybox setup"}};
    answer.notes = {"started dockerd"};
    answer.pid = 4242;
    answer.api_version = "1.43";
    answer.started = true;
    answer.seconds = 2.5;
    return answer;
}

// A start answer of a pool of two engines, the second not verified.
inline EngineStartAnswer sample_pool_start()
{
    EngineStartAnswer answer = sample_start();
    answer.engines = {proto::PoolEngine{"local", "unix:///r/engine/docker.sock", true, true, true, 2, {}, {}, "1.41"},
                      proto::PoolEngine{"e2", "unix:///e2/docker.sock", true, false, false, 0,
                                 {{"ping", "The engine does not answer."}}, {"copied image stdlib"}, std::nullopt}};
    return answer;
}

inline SetupAnswer sample_setup()
{
    SetupImage image;
    image.name = "stdlib";
    image.image_id = "sha256:abc";
    image.recipe_sha256 = "r";
    image.seconds = 23.4;
    image.tar_sha256 = "t";
    image.previous_image_id = "sha256:old";
    image.previous_image_removed = false;
    return SetupAnswer{{image}};
}

inline ImageList sample_images()
{
    return ImageList{{{"stdlib", "sha256:abc", "r", "2026-12-01T00:00:00Z", "t", true, std::nullopt},
                      {"data", "sha256:d", "s", "2026-12-01T00:00:00Z", "u", std::nullopt, "The engine does not answer."}}};
}

inline proto::AttemptsAnswer sample_attempts()
{
    proto::SettledAttempt settled;
    settled.run_id = std::string(32, 'b');
    settled.created_at = "2026-12-01T02:50:00Z";
    settled.expires_at = 1'764'557'520;
    settled.container_id = std::string(64, 'c');
    settled.settled_at = "2026-12-01T02:53:01Z";
    settled.box = proto::k_box_removed_by_sweep;
    settled.box_removed_at = "2026-12-01T02:52:01Z";
    settled.run_parent_released = true;
    settled.errors = {"the engine did not answer"};
    settled.owner_uid = 1000;
    settled.receipt = settled.run_id;
    return proto::AttemptsAnswer{{{std::string(32, 'a'), "2026-12-01T03:00:00Z", 1'764'558'120, "", true, false, false,
                                   1000}},
                                 1,
                                 {settled},
                                 0};
}

// A receipt list with one kept receipt of a run that ended by itself and one of a run that never
// started, whose file failed the check.
inline proto::ReceiptList sample_receipts()
{
    return {{{std::string(32, 'a'), "2026-12-01T03:00:00.000001Z", "stdlib", 0, "TARGET_EXIT_OBSERVED", true, 4321, 1000,
              std::nullopt},
             {std::string(32, 'b'), "2026-12-01T02:00:00.000001Z", "data", std::nullopt, "NOT_STARTED", false, 2100,
              1000, "Its signature does not verify with this installation's key (not_signed): The receipt has no "
                    "signature block."}},
            1000,
            64 * 1024 * 1024};
}

// A doctor answer with one check of each verdict.
inline proto::DoctorAnswer sample_doctor()
{
    return {{{"engine", "ok", "running and verified", ""},
             {"runtime_folder", "problem", "/r has mode 0755, not 0700", "chmod 700 /r"},
             {"clock", "unknown", "the engine's /info was not read", ""}}};
}

}  // namespace pybox::test
