#!/usr/bin/env bash
# Usage: tests/k8s/build_k8s.sh OUT [pause]   (as root; binaries.sh runs it when it has no binaries)
# Builds the test cluster's kube-apiserver and kubelet (v1.20: cmd/kube-apiserver and cmd/kubelet
# with Debian's Go) and the static pause (build/pause/linux/pause.c) from Debian 12's own
# `kubernetes` source package into OUT; with "pause", only the pause (seconds). About 15 min on
# 2 cores; prints each step as it starts.
#
# The machine needs no deb-src source: the Debian sources apt already uses are given to apt as
# deb-src too, in a sources folder and package lists of this script's own, named on each apt
# command line (-o Dir::Etc::...), so the system's apt configuration and lists stay as they
# were. Its build dependencies (Debian's golang among them) are installed with apt-get build-dep.
# The unpacked source and Go's build cache stay in OUT/../build-source, so a build that was
# stopped resumes; make.log there has the compiler's output.
set -euo pipefail
out=${1:?usage: build_k8s.sh OUT [pause]}
only_pause=no
[ "${2:-}" = pause ] && only_pause=yes
mkdir -p "$out"
out=$(cd "$out" && pwd)
work="$out/../build-source"
mkdir -p "$work/apt/lists/partial" "$work/apt/sources"
work=$(cd "$work" && pwd)
step() { echo "build_k8s: $* ($(date -u +%H:%M:%S))"; }

# The machine's Debian sources (deb822 or one-line), as both deb and deb-src.
sources="$work/apt/sources/debian.sources"
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  sed 's/^Types:.*/Types: deb deb-src/' /etc/apt/sources.list.d/debian.sources > "$sources"
elif grep -qE '^deb .*debian' /etc/apt/sources.list 2> /dev/null; then
  sources="$work/apt/sources/debian.list"
  grep -E '^deb .*debian' /etc/apt/sources.list | sed 'p; s/^deb /deb-src /' > "$sources"
else
  printf 'Types: deb deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n' \
    > "$sources"
fi
apt_own=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$work/apt/sources"
         -o "Dir::State::Lists=$work/apt/lists")
export DEBIAN_FRONTEND=noninteractive

step "package lists (deb and deb-src) into $work/apt/lists"
apt-get "${apt_own[@]}" update -q > "$work/apt-update.log"
if [ "$only_pause" = no ]; then
  step "build dependencies of kubernetes (apt-get build-dep)"
  apt-get "${apt_own[@]}" build-dep -y -q --no-install-recommends kubernetes > "$work/build-dep.log"
fi

source_dir=$(find "$work" -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
if [ -z "$source_dir" ] || [ ! -f "$source_dir/go.mod" ]; then
  step "apt-get source kubernetes (download and unpack) into $work"
  (cd "$work" && apt-get "${apt_own[@]}" source -q kubernetes > "$work/source.log")
  source_dir=$(find "$work" -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
fi
[ -f "$source_dir/go.mod" ] || { echo "build_k8s: no unpacked source with a go.mod in $work" >&2; exit 1; }
# The package's version, e.g. 1.20.5+really1.20.2-1.1+deb12u1: the upstream release is 1.20.2.
package_version=$(cd "$source_dir" && dpkg-parsechangelog -S Version)
release=${package_version#*really}
release=v${release%%-*}
step "source $source_dir ($package_version, Kubernetes $release)"

pause_partial="$out/pause.partial.$$"
gcc -Os -Wall -Werror -static -DVERSION="$release" -o "$pause_partial" "$source_dir/build/pause/linux/pause.c"
mv "$pause_partial" "$out/pause"
step "built the static pause into $out"
[ "$only_pause" = no ] || exit 0

# As the package's debian/rules builds (upstream's make in GOPATH mode, the source linked into
# a GOPATH), only the two programs: kube-apiserver static (CGO_ENABLED=0, as upstream builds
# it), the kubelet with cgo. The version they report (kubelet --version, the node's
# kubeletVersion) is the release, as upstream's hack/lib/version.sh takes it from KUBE_GIT_VERSION.
mkdir -p "$source_dir/.go/src/k8s.io"
[ -L "$source_dir/.go/src/k8s.io/kubernetes" ] || ln -s ../../.. "$source_dir/.go/src/k8s.io/kubernetes"
step "make WHAT='cmd/kube-apiserver cmd/kubelet' (the long part)"
(cd "$source_dir" && env GOPATH="$source_dir/.go" GOCACHE="$work/gocache" GOFLAGS= GOTOOLCHAIN=local \
  KUBE_GIT_VERSION="$release" KUBE_GIT_TREE_STATE=clean make WHAT="cmd/kube-apiserver cmd/kubelet" \
  > "$work/make.log" 2>&1) || { tail -n 30 "$work/make.log" >&2; exit 1; }
for program in kube-apiserver kubelet; do
  install -m 755 "$source_dir/_output/bin/$program" "$out/$program.partial"
  mv "$out/$program.partial" "$out/$program"
done
step "built into $out: $("$out/kubelet" --version)"
