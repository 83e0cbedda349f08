// The Kubernetes client's own fixed numbers (daemon/kube/): how much of a kubeconfig and the
// files it names is read, how long connecting may take, and the bounds of the attach stream.
// Answers of the apiserver are bounded by limits::k_max_engine_response_bytes, as the engine's,
// except the kubelet's summary of a node (kubelet_summary.hpp), bounded by its own figure.
#pragma once

#include <chrono>
#include <cstddef>

namespace pybox::kube {

// A kubeconfig file, and each file it names (CA, client certificate, key, token).
inline constexpr std::size_t k_max_kubeconfig_bytes = 1024 * 1024;
inline constexpr std::size_t k_max_credential_file_bytes = 256 * 1024;

// Resolving, connecting and the TLS handshake of one connection to the apiserver: at most this,
// and never more than the call's own timeout.
inline constexpr std::chrono::milliseconds k_connect_timeout{5'000};

// One websocket message of the attach stream as read (the kubelet writes output in pieces of
// at most 32 KiB), and the Status on channel 3 (a few hundred bytes in practice).
inline constexpr std::size_t k_max_attach_message_bytes = 64 * 1024;
inline constexpr std::size_t k_max_attach_status_bytes = 16 * 1024;
// Stdin is written in messages of at most this many bytes (channel byte not counted).
inline constexpr std::size_t k_stdin_message_bytes = 32 * 1024;

// The kubelet's summary of a node's Pods, CPU and memory only (about 1 KiB per Pod: a node's
// 110 Pods of the default maxPods fit many times over).
inline constexpr std::size_t k_max_kubelet_summary_bytes = 4 * 1024 * 1024;

}  // namespace pybox::kube
