// How a Docker engine of the pool receives the recorded images (DockerBackend::receive_images):
// copied from the engine that built them, so
// that every engine holds each image under the same ID: GET /images/{id}/get on the source
// engine into a tar under <runtime>/build/, POST /images/load of that tar into the target,
// and the loaded ID compared with the recorded one (the per-run check, verify_image_for_run,
// then compares ID and recipe SHA-256 on each engine as it does for one).
//
// An image the target already holds under the recorded ID costs one inspect. Each copy has
// k_image_copy_timeout for the export and again for the load, and at most
// k_max_image_copy_bytes of tar; the tar is deleted afterwards in every case. Failures are
// notes, not errors: the target's "images" check then says which image it lacks.
// Runs on the caller's executor; both clients must outlive the call.
#pragma once

#include "daemon/engine/engine_client.hpp"
#include "daemon/vm/private_engine.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pybox::engine {

inline constexpr std::chrono::minutes k_image_copy_timeout{10};
inline constexpr std::uint64_t k_max_image_copy_bytes = std::uint64_t{8} << 30;  // 8 GiB

// What the copy did or could not do, one note per image copied or failed.
boost::asio::awaitable<std::vector<std::string>> copy_images(EngineClient& from, EngineClient& to,
                                                             std::vector<vm::RecordedImage> images,
                                                             std::filesystem::path work_dir);

}  // namespace pybox::engine
