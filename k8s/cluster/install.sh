#!/usr/bin/env bash
# Builds the Kubernetes control plane `make k8s-up` starts into $PROXYBENCH_CACHE/k8s/bin (never
# into the clone): etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubectl, from
# the Go module proxy at the versions kube/go.mod pins (go.sum-checked). No release download: the
# machines reach package registries only. A cold build takes about 20 minutes on 2 CPUs, so it
# runs at the lowest priority. The k6-operator is install-operator.sh's.
#
# Idempotent: nothing is built when every binary reports its pinned version.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../../proxies/pins.sh
# shellcheck source-path=SCRIPTDIR
. kube-build.sh

# the versions are kube/go.mod's requirements: one place to bump them
kube_version="$(kube_required k8s.io/kubernetes)"
etcd_version="$(kube_required go.etcd.io/etcd/server/v3)"
if [ -z "$kube_version" ] || [ -z "$etcd_version" ]; then
  echo "install: k8s/cluster/kube/go.mod requires no k8s.io/kubernetes or go.etcd.io/etcd/server/v3" >&2
  exit 1
fi

if pins_mode; then
  pins_go_module k8s.io/kubernetes "$kube_version"
  pins_go_module go.etcd.io/etcd/server/v3 "$etcd_version"
  exit 0
fi

dir="$PROXYBENCH_CACHE/k8s"
kube_bins=(kube-apiserver kube-controller-manager kube-scheduler)

# installed prints the version each binary reports, one line each, in a fixed order
installed() {
  local b
  for b in "${kube_bins[@]}"; do
    "$dir/bin/$b" --version 2>/dev/null | awk '{ print $2; exit }' || true
  done
  "$dir/bin/kubectl" version --client 2>/dev/null | awk '$1 == "Client" { print $3; exit }' || true
  "$dir/bin/etcd" --version 2>/dev/null | awk '$2 == "Version:" { print "v" $3; exit }' || true
}
want="$(printf '%s\n' "$kube_version" "$kube_version" "$kube_version" "$kube_version" "$etcd_version")"

if [ "$(installed)" != "$want" ]; then
  command -v go >/dev/null || { echo "install: Kubernetes is built from source and needs Go on PATH" >&2; exit 1; }
  echo "install: building Kubernetes $kube_version and etcd $etcd_version from the Go module proxy (cold: about 20 min on 2 CPUs)" >&2
  tmpbin="$dir/bin.tmp.$$"
  trap 'rm -rf "$tmpbin"' EXIT
  mkdir -p "$tmpbin"
  kube_build "$kube_version" "$tmpbin" "${kube_bins[@]}" kubectl
  # -mod=readonly: kube/go.mod and go.sum as committed, nothing resolved anew
  export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOWORK=off
  (cd kube && nice -n 19 go build -trimpath -ldflags "-s -w" -o "$tmpbin/etcd" go.etcd.io/etcd/server/v3)
  mkdir -p "$dir/bin"
  for b in "${kube_bins[@]}" kubectl etcd; do
    mv -f "$tmpbin/$b" "$dir/bin/$b"
  done
  got="$(installed)"
  if [ "$got" != "$want" ]; then
    echo "install: the binaries built report versions '$(echo "$got" | paste -sd' ')', want '$(echo "$want" | paste -sd' ')'" >&2
    exit 1
  fi
  pins_record kubernetes "Kubernetes $kube_version (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl) and etcd $etcd_version built from the Go module proxy (k8s/cluster/kube/go.mod, go.sum-checked)"
fi

