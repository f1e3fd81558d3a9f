# shellcheck shell=bash
# The machine's architecture, in the names each registry uses: the one place every install script
# and docker/base-images.sh take it from, so that an arm64 machine (Apple silicon under Docker,
# Graviton) and an x86_64 one install the same pins, each its own build of them.
#
#   arch_go              amd64 | arm64    Go's GOARCH, Docker's TARGETARCH, Debian's dpkg arch
#   arch_uname           x86_64 | aarch64 uname -m, PyPI's manylinux wheel tags
#   arch_uname_of ARCH   the same for a given arch (make pins resolves both arches' pins)
#   PROXYBENCH_ARCHES    every arch a pin has a twin for: `make pins` checks each
#
# PROXYBENCH_ARCH, when set (the Dockerfile sets it from TARGETARCH), must agree with the machine:
# an install builds and links for the machine it runs on, so a mismatch means an image stage on
# the wrong base image, which is said rather than installing the wrong arch's binaries.
# Run as a script (`bash proxies/arch.sh check`), it checks that and Go's GOARCH, and prints arch_go.

# shellcheck disable=SC2034 # read by the scripts that source this one
PROXYBENCH_ARCHES="amd64 arm64"

# _arch_norm NAME: amd64 or arm64 from any of their names; nothing for another arch
_arch_norm() {
  case "$1" in
  amd64 | x86_64 | x86-64) echo amd64 ;;
  arm64 | aarch64 | arm64/v8 | armv8*) echo arm64 ;;
  esac
}

# the running machine's: dpkg's when there is one (what apt installs for; a 32-bit userland on a
# 64-bit kernel is dpkg's arch, not uname's), else the kernel's
arch_machine() {
  local m
  m="$(dpkg --print-architecture 2>/dev/null || uname -m)"
  if [ -z "$(_arch_norm "$m")" ]; then
    echo "arch: proxybench installs for amd64 (x86_64) and arm64 (aarch64), not $m" >&2
    return 1
  fi
  _arch_norm "$m"
}

arch_go() {
  local m want
  m="$(arch_machine)" || return 1
  if [ -n "${PROXYBENCH_ARCH:-}" ]; then
    want="$(_arch_norm "$PROXYBENCH_ARCH")"
    if [ -z "$want" ]; then
      echo "arch: PROXYBENCH_ARCH=$PROXYBENCH_ARCH: give amd64 or arm64" >&2
      return 1
    fi
    if [ "$want" != "$m" ]; then
      echo "arch: building for $want (PROXYBENCH_ARCH, the image's TARGETARCH) on a $m machine:" \
        "the base images are $m's; make $want ones (BASE_ARCH=$want docker/base-images.sh) or build for $m" >&2
      return 1
    fi
  fi
  echo "$m"
}

arch_uname_of() {
  case "$(_arch_norm "$1")" in
  amd64) echo x86_64 ;;
  arm64) echo aarch64 ;;
  *)
    echo "arch: no uname name for $1" >&2
    return 1
    ;;
  esac
}

arch_uname() {
  local a
  a="$(arch_go)" || return 1
  arch_uname_of "$a"
}

# bash proxies/arch.sh check: the machine, PROXYBENCH_ARCH and Go (when on PATH) agree
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-}" in
  check)
    a="$(arch_go)"
    if command -v go >/dev/null; then
      g="$(go env GOARCH)"
      if [ "$g" != "$a" ]; then
        echo "arch: Go on PATH builds for $g, this machine is $a: the Go toolchain (GOLANG_IMAGE) is another arch's" >&2
        exit 1
      fi
    fi
    echo "$a"
    ;;
  *)
    echo "usage: bash proxies/arch.sh check" >&2
    exit 2
    ;;
  esac
fi
