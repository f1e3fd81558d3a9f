#!/usr/bin/env bash
# Installs the k6-operator's controller (`manager`) and its CRDs into $PROXYBENCH_CACHE/k8s/k6-operator
# for `make k8s-up`. No registry serves them (the Go module proxy refuses the operator's module,
# and no image registry is reachable), so they come from K6_OPERATOR_DIR: a directory holding
# manager-v<version>-linux-<arch>.xz and crd/, checked against the sha256 pinned here.
#
# Exit status 2, with one line: no K6_OPERATOR_DIR given and none installed before.
# Idempotent: nothing is done when the installed controller has its pinned sha256.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../../proxies/pins.sh

K6_OPERATOR_VERSION="${K6_OPERATOR_VERSION:-1.6.0}"
K6_OPERATOR_XZ_SHA256="${K6_OPERATOR_XZ_SHA256:-60fbb47fc3cb109fa62d9268109de7a4604ed707bed0f15563226721e484f267}"
K6_OPERATOR_SHA256="${K6_OPERATOR_SHA256:-5b27a853b074740b6c2e600553f6922e0e726b4f1618bc99bfaebdf49bb6f7cf}"

if pins_mode; then
  pins_row "k6-operator" "v$K6_OPERATOR_VERSION (sha256 ${K6_OPERATOR_XZ_SHA256:0:12}…)" "none: no registry serves it" \
    "K6_OPERATOR_DIR=${K6_OPERATOR_DIR:-(unset)}"
  exit 0
fi

op="$PROXYBENCH_CACHE/k8s/k6-operator"
sha() { sha256sum "$1" | awk '{ print $1 }'; }
if [ -x "$op/manager" ] && [ "$(sha "$op/manager")" = "$K6_OPERATOR_SHA256" ] && [ -f "$op/crd/k6.io_testruns.yaml" ]; then
  exit 0
fi
if [ -z "${K6_OPERATOR_DIR:-}" ]; then
  echo "install: no k6-operator: give K6_OPERATOR_DIR=<a directory with manager-v$K6_OPERATOR_VERSION-linux-amd64.xz and crd/> (no registry serves it: k8s/README.md)" >&2
  exit 2
fi
xz="$K6_OPERATOR_DIR/manager-v$K6_OPERATOR_VERSION-linux-$(go env GOARCH 2>/dev/null || echo amd64).xz"
if [ ! -f "$xz" ] || [ ! -f "$K6_OPERATOR_DIR/crd/k6.io_testruns.yaml" ]; then
  echo "install: K6_OPERATOR_DIR=$K6_OPERATOR_DIR holds no $(basename "$xz") or no crd/k6.io_testruns.yaml (the k6-operator v$K6_OPERATOR_VERSION: its controller and CRDs)" >&2
  exit 1
fi
if [ "$(sha "$xz")" != "$K6_OPERATOR_XZ_SHA256" ]; then
  echo "install: $xz has sha256 $(sha "$xz"), pinned $K6_OPERATOR_XZ_SHA256 (K6_OPERATOR_XZ_SHA256 in k8s/cluster/install-operator.sh)" >&2
  exit 1
fi
mkdir -p "$op/crd"
tmp="$op/manager.tmp.$$"
trap 'rm -f "$tmp"' EXIT
xz -dc "$xz" >"$tmp"
if [ "$(sha "$tmp")" != "$K6_OPERATOR_SHA256" ]; then
  echo "install: $xz unpacks to a manager with sha256 $(sha "$tmp"), pinned $K6_OPERATOR_SHA256 (K6_OPERATOR_SHA256)" >&2
  exit 1
fi
chmod 0755 "$tmp"
rm -f "$op"/crd/*.yaml
cp "$K6_OPERATOR_DIR"/crd/*.yaml "$op/crd/"
mv -f "$tmp" "$op/manager"
pins_record k6-operator "k6-operator v$K6_OPERATOR_VERSION controller and CRDs from K6_OPERATOR_DIR ($(basename "$xz"), sha256 $K6_OPERATOR_XZ_SHA256)"
