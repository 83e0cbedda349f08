// What the Kubernetes test cluster's script wrote for the tests (tests/k8s/cluster_up.sh, the
// ctest fixture k8s; docs/testing.md "The Kubernetes test cluster"): the KEY=VALUE lines of
// $PYBOX_K8S_HOME/cluster.env. A test that reads them fails when the file or a key is missing:
// it never skips.
#pragma once

#include <string>

namespace pybox::test {

// The value of `key` in cluster.env (a Catch2 failure when there is none).
const std::string& cluster_env(const std::string& key);

}  // namespace pybox::test
