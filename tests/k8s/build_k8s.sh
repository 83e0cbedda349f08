#!/usr/bin/env bash
# Usage: tests/k8s/build_k8s.sh OUT   (as root; binaries.sh runs it when no built binaries exist)
# Builds the test cluster's kube-apiserver and kubelet (v1.20, `go build` of cmd/kube-apiserver
# and cmd/kubelet with Debian's Go) and the static pause (build/pause) from Debian 12's own
# `kubernetes` source package into OUT. About 30 min on 2 cores; prints each step as it starts.
#
# The machine needs no deb-src source: the Debian sources apt already uses are given to apt as
# deb-src too, in a sources folder and package lists of this script's own, named on each apt
# command line (-o Dir::Etc::...), so the system's apt configuration and lists stay as they
# were. Its build dependencies (Debian's golang among them) are installed with apt-get build-dep.
# The unpacked source and Go's build cache stay in OUT/../build-source, so a build that was
# stopped resumes.
set -euo pipefail
out=${1:?usage: build_k8s.sh OUT}
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
step "build dependencies of kubernetes (apt-get build-dep)"
apt-get "${apt_own[@]}" build-dep -y -q --no-install-recommends kubernetes > "$work/build-dep.log"

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

# The version the programs report (kubelet --version, the node's kubeletVersion), as the
# upstream build sets it (hack/lib/version.sh).
version_flags=""
for package in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
  version_flags+=" -X k8s.io/kubernetes/vendor/$package.gitVersion=$release"
  version_flags+=" -X k8s.io/kubernetes/vendor/$package.gitMajor=${release:1:1}"
  version_flags+=" -X k8s.io/kubernetes/vendor/$package.gitMinor=$(echo "$release" | cut -d. -f2)"
  version_flags+=" -X k8s.io/kubernetes/vendor/$package.gitTreeState=clean"
done
export GOFLAGS=-mod=vendor GO111MODULE=on GOPATH="$work/gopath" GOCACHE="$work/gocache" GOTOOLCHAIN=local
step "go build ./cmd/kube-apiserver (static, as upstream builds it)"
(cd "$source_dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w$version_flags" \
  -o "$out/kube-apiserver.partial" ./cmd/kube-apiserver)
step "go build ./cmd/kubelet"
(cd "$source_dir" && go build -trimpath -ldflags "-s -w$version_flags" -o "$out/kubelet.partial" ./cmd/kubelet)
step "the static pause (build/pause)"
pause_source=$(find "$source_dir/build/pause" -name pause.c | head -n 1)
gcc -Os -Wall -Werror -static -DVERSION="$release" -o "$out/pause.partial" "$pause_source"
for program in kube-apiserver kubelet pause; do mv "$out/$program.partial" "$out/$program"; done
step "built into $out: $("$out/kubelet" --version)"
