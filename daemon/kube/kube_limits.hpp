// The Kubernetes client's own fixed numbers (daemon/kube/): how much of a kubeconfig and the
// files it names is read.
#pragma once

#include <cstddef>

namespace pybox::kube {

// A kubeconfig file, and each file it names (CA, client certificate, key, token).
inline constexpr std::size_t k_max_kubeconfig_bytes = 1024 * 1024;
inline constexpr std::size_t k_max_credential_file_bytes = 256 * 1024;

}  // namespace pybox::kube
