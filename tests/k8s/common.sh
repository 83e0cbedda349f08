# shellcheck shell=bash
# Sourced by cluster_up.sh and cluster_down.sh: what both must compute the same way.

# cgroup_root HOME: the cluster's cgroup, in every hierarchy: /pybox-k8s-<first 8 hex digits of
# the MD5 of the home's real path>. The kubelet's cgroupRoot and the node dockerd's cgroup parent
# are under it, so clusters of different homes, and the project's other engines, never share one.
cgroup_root() {
  printf '/pybox-k8s-%s\n' "$(printf '%s' "$1" | md5sum | cut -c1-8)"
}

# cgroup_hierarchies: the host's cgroup hierarchies, one mount point a line (each v1
# controller's and the v2 one), read from the mount table: under cgroup v2 alone the entries of
# /sys/fs/cgroup are cgroups, not hierarchies.
cgroup_hierarchies() {
  awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/self/mounts | sort -u
}
