#!/usr/bin/env bash
# Installs what a node of `make k8s-up NODE=1` runs, beside the control plane install.sh builds:
#
# - the kubelet and kube-proxy, built from the Go module proxy at kube/go.mod's Kubernetes version
#   into $PROXYBENCH_CACHE/k8s/bin (same module, same stamped version as the control plane);
# - Debian's containerd and runc (the container runtime), the CNI plugins (bridge, host-local,
#   loopback) and iptables (kube-proxy's), pinned by version;
# - busybox-static, the shell and tools the pods' image carries (k8s/image): unpacked into the
#   install cache, never installed on the machine.
#
# Idempotent: nothing is built or installed when everything is at its pin.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../../proxies/apt-pinned.sh
# shellcheck source-path=SCRIPTDIR
. kube-build.sh

CONTAINERD_DEB_VERSION="${CONTAINERD_DEB_VERSION:-1.6.20~ds1-1+deb12u3}"
RUNC_DEB_VERSION="${RUNC_DEB_VERSION:-1.1.5+ds1-1+deb12u1}"
CNI_DEB_VERSION="${CNI_DEB_VERSION:-1.1.1+ds1-3+b5}"
IPTABLES_DEB_VERSION="${IPTABLES_DEB_VERSION:-1.8.9-2}"
BUSYBOX_DEB_VERSION="${BUSYBOX_DEB_VERSION:-1:1.35.0-4+deb12u1+b1}"

kube_version="$(kube_required k8s.io/kubernetes)"
[ -n "$kube_version" ] || { echo "install-node: k8s/cluster/kube/go.mod requires no k8s.io/kubernetes" >&2; exit 1; }

if pins_mode; then
  for p in "containerd=$CONTAINERD_DEB_VERSION" "runc=$RUNC_DEB_VERSION" \
    "containernetworking-plugins=$CNI_DEB_VERSION" "iptables=$IPTABLES_DEB_VERSION" \
    "busybox-static=$BUSYBOX_DEB_VERSION"; do
    apt_install_pinned - "$p"
  done
  exit 0
fi

APT_PIDFILES="/run/containerd/containerd.pid" apt_install_pinned containerd "containerd=$CONTAINERD_DEB_VERSION"
APT_PIDFILES="" apt_install_pinned runc "runc=$RUNC_DEB_VERSION"
APT_PIDFILES="" apt_install_pinned - "containernetworking-plugins=$CNI_DEB_VERSION"
APT_PIDFILES="" apt_install_pinned iptables "iptables=$IPTABLES_DEB_VERSION"

dir="$PROXYBENCH_CACHE/k8s"

# busybox for the image only: the package's file, unpacked into the cache (the machine keeps
# its own tools). The pin first, then another revision of its upstream version, as
# apt_install_pinned takes them (Debian replaces revisions).
busybox="$dir/busybox/bin/busybox"
if [ "$(cat "$dir/busybox/version" 2>/dev/null)" != "$BUSYBOX_DEB_VERSION" ] || [ ! -x "$busybox" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  got=""
  for v in "$BUSYBOX_DEB_VERSION" $(_apt_versions busybox-static); do
    [ "$(pins_upstream "$v")" = "$(pins_upstream "$BUSYBOX_DEB_VERSION")" ] || continue
    if (cd "$tmp" && apt-get download "busybox-static=$v" >/dev/null 2>&1); then got="$v"; break; fi
  done
  if [ -z "$got" ]; then
    echo "install-node: apt-get download busybox-static: no version of upstream $(pins_upstream "$BUSYBOX_DEB_VERSION") downloads (pinned $BUSYBOX_DEB_VERSION; apt-get update, or see make pins)" >&2
    exit 1
  fi
  [ "$got" = "$BUSYBOX_DEB_VERSION" ] || echo "install: busybox-static: $got instead of the pin $BUSYBOX_DEB_VERSION (no longer in the archive)" >&2
  dpkg-deb -x "$tmp"/busybox-static_*.deb "$tmp/x"
  mkdir -p "$dir/busybox/bin"
  install -m 0755 "$tmp/x/bin/busybox" "$busybox"
  echo "$BUSYBOX_DEB_VERSION" >"$dir/busybox/version"
  rm -rf "$tmp"
  trap - EXIT
fi
ln -sfn "$busybox" "$dir/bin/busybox"

installed() {
  local b
  for b in kubelet kube-proxy; do
    "$dir/bin/$b" --version 2>/dev/null | awk '{ print $2; exit }' || true
  done
}
want="$(printf '%s\n' "$kube_version" "$kube_version")"
if [ "$(installed)" != "$want" ]; then
  command -v go >/dev/null || { echo "install-node: the kubelet is built from source and needs Go on PATH" >&2; exit 1; }
  echo "install-node: building the kubelet and kube-proxy $kube_version from the Go module proxy (cold: about 10 min on 2 CPUs)" >&2
  tmpbin="$dir/bin.node.$$"
  trap 'rm -rf "$tmpbin"' EXIT
  mkdir -p "$tmpbin" "$dir/bin"
  kube_build "$kube_version" "$tmpbin" kubelet kube-proxy
  mv -f "$tmpbin/kubelet" "$tmpbin/kube-proxy" "$dir/bin/"
  got="$(installed)"
  if [ "$got" != "$want" ]; then
    echo "install-node: the binaries built report versions '$(echo "$got" | paste -sd' ')', want '$(echo "$want" | paste -sd' ')'" >&2
    exit 1
  fi
  pins_record kubernetes-node "kubelet and kube-proxy $kube_version built from the Go module proxy (k8s/cluster/kube/go.mod, go.sum-checked)"
fi
