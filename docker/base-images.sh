#!/usr/bin/env bash
# Makes the Dockerfile's base images from registries this machine reaches, for a Docker engine
# that can pull none, and prints the build arguments that point the Dockerfile at them:
#
#   debian:bookworm-slim  -> proxybench-base/debian:bookworm    mmdebstrap --variant=minbase bookworm
#   golang:X-bookworm     -> proxybench-base/golang:X           Go X from the Go module proxy
#                                                               (golang.org/toolchain, checksum-checked)
#   rust:Y-bookworm       -> proxybench-base/rust:Y             bookworm with the build tools the
#                                                               install scripts use, and this
#                                                               machine's rustup toolchain (Y)
#   (XK6_IMAGE)           -> proxybench-base/xk6:<sha256>       XK6_BIN, when given, at
#                                                               /usr/local/bin/xk6
#
# The versions are the Dockerfile's (its ARG defaults), but Rust's: no registry serves a Rust
# toolchain, so the one this machine has is taken and named. An image already there is kept.
# Needs DOCKER_HOST (engine.sh) and root (mmdebstrap).
#
# The images are this machine's arch (proxies/arch.sh), and keep the names above; BASE_ARCH=arm64
# (or amd64) makes another arch's, named with it (proxybench-base/debian:bookworm-arm64…), which
# needs Debian's qemu-user-static with binfmt_misc (mmdebstrap runs the other arch's maintainer
# scripts) and RUST_SYSROOT, a Rust toolchain for that arch (rustup toolchain install
# stable-aarch64-unknown-linux-gnu --force-non-host; its `rustc --print sysroot`). The last line
# printed is TARGETARCH=…, the build argument the classic builder (Docker 20.10's default) does not
# set by itself, as BuildKit does.
#
# Under `make pins` (PROXYBENCH_PINS=1) it checks the Go toolchain of each arch against its pinned
# module hash (downloading it, as an image build would) and makes no image.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=proxies/pins.sh
. proxies/pins.sh
# shellcheck source=proxies/arch.sh
. proxies/arch.sh

# The Go toolchain of the golang image, per arch: the module hash of golang.org/toolchain
# @v0.0.1-go<version>.linux-<arch> (go.sum's h1:, the checksum database's too), for the Dockerfile's
# GOLANG_IMAGE version. Another version: set both (`go mod download -json` of each prints its Sum).
GO_TOOLCHAIN_SUM_amd64="${GO_TOOLCHAIN_SUM_amd64:-h1:ZOmGe1OnfREDMIdb1Qi4G9JSuDPBLGExZMQ4nis1RXM=}"
GO_TOOLCHAIN_SUM_arm64="${GO_TOOLCHAIN_SUM_arm64:-h1:sYL/O6MqS68ML0kjsQ36WoYIpJqkw60TxizWUYUKQMc=}"
docker="$PROXYBENCH_CACHE/bin/docker"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

arg_default() { sed -n "s/^ARG $1=//p" Dockerfile; }
have() { "$docker" image inspect "$1" >/dev/null 2>&1; }

go_version="$(arg_default GOLANG_IMAGE | sed -n 's/^golang:\([0-9.]*\)-bookworm$/\1/p')"
[ -n "$go_version" ] || { echo "base-images: the Dockerfile's GOLANG_IMAGE is not golang:X-bookworm" >&2; exit 1; }
go_toolchain() { echo "golang.org/toolchain@v0.0.1-go$go_version.linux-$1"; }
go_toolchain_sum() {
  local var="GO_TOOLCHAIN_SUM_$1"
  echo "${!var}"
}

if pins_mode; then
  for a in $PROXYBENCH_ARCHES; do
    sum="$(go_toolchain_sum "$a")"
    take="go$go_version linux-$a (module hash matches)"
    if ! pins_go_verified "golang.org/toolchain" "v0.0.1-go$go_version.linux-$a" "$sum" \
      "GO_TOOLCHAIN_SUM_$a in docker/base-images.sh" 2>/dev/null; then
      take="NOTHING: the Go module proxy serves no $(go_toolchain "$a") with hash $sum: set GO_TOOLCHAIN_SUM_$a in docker/base-images.sh"
    fi
    pins_row "Go toolchain, linux-$a (golang image, docker/base-images.sh)" "go$go_version ${sum:0:15}…" "immutable by version (go.sum)" "$take"
  done
  exit 0
fi

machine="$(arch_machine)"
arch="$(_arch_norm "${BASE_ARCH:-$machine}")"
[ -n "$arch" ] || { echo "base-images: BASE_ARCH=${BASE_ARCH:-}: give amd64 or arm64" >&2; exit 1; }
# another arch's images are named with it: a plain name is what runs natively, as on a registry
suffix=""
if [ "$arch" != "$machine" ]; then suffix="-$arch"; fi

# This machine's trust goes into the images: registries may be reached through a TLS proxy
# whose CA only the machine's bundle holds (the build stage fetches from PyPI, crates.io and the
# Go module proxy). Added as a local CA, so an update-ca-certificates in a build keeps it.
host_trust="${HOST_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
trust_hook="mkdir -p \"\$1/usr/local/share/ca-certificates\" \"\$1/etc/ssl/certs\""
trust_hook+=" && cp '$host_trust' \"\$1/usr/local/share/ca-certificates/proxybench-host-trust.crt\""
trust_hook+=" && if [ -x \"\$1/usr/sbin/update-ca-certificates\" ]; then chroot \"\$1\" update-ca-certificates >/dev/null;"
trust_hook+=" else cp '$host_trust' \"\$1/etc/ssl/certs/ca-certificates.crt\"; fi"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# import NAME [CHANGE...]: $tmp/rootfs.tar as an image (written whole first: a failed mmdebstrap
# must not leave half an image under the name)
import() {
  local name="$1" changes=() c
  shift
  for c in "$@"; do changes+=(--change "$c"); done
  # --platform: recorded by newer engines; Docker 20.10's records its own arch whatever it says
  # (tried: an arm64 import inspects as linux/amd64), which its classic builder never checks
  "$docker" import --platform "linux/$arch" "${changes[@]}" "$tmp/rootfs.tar" "$name" >/dev/null
  rm -f "$tmp/rootfs.tar"
  echo "base-images: made $name" >&2
}

debian="proxybench-base/debian:bookworm$suffix"
if ! have "$debian"; then
  echo "base-images: $debian from Debian's packages (mmdebstrap, minbase, $arch)" >&2
  # as the official slim image: no documentation, manual pages or translations
  mmdebstrap --quiet --variant=minbase --architectures="$arch" --aptopt='APT::Install-Recommends "false"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook="$trust_hook" \
    bookworm "$tmp/rootfs.tar" "$mirror"
  import "$debian" 'CMD ["bash"]'
fi

golang="proxybench-base/golang:$go_version$suffix"
if ! have "$golang"; then
  echo "base-images: $golang from the Go module proxy ($(go_toolchain "$arch"))" >&2
  # the module hash first: a toolchain re-tagged or no longer served is said, not imported
  pins_go_verified golang.org/toolchain "v0.0.1-go$go_version.linux-$arch" "$(go_toolchain_sum "$arch")" \
    "GO_TOOLCHAIN_SUM_$arch in docker/base-images.sh"
  dir="$(pins_go_download "$(go_toolchain "$arch")" Dir)"
  [ -d "$dir/bin" ] || { echo "base-images: go $go_version: the Go module proxy gave no toolchain" >&2; exit 1; }
  # the module cache keeps files read-only and not executable: the toolchain's programs are
  # made executable again, as Go's own toolchain switch does when it unpacks this module
  mkdir -p "$tmp/root/usr/local"
  cp -R "$dir" "$tmp/root/usr/local/go"
  chmod -R u+w "$tmp/root/usr/local/go"
  chmod +x "$tmp/root/usr/local/go/bin/"* "$tmp/root/usr/local/go/pkg/tool/"*/*
  tar -C "$tmp/root" --owner=0 --group=0 -cf "$tmp/rootfs.tar" usr
  rm -rf "$tmp/root"
  import "$golang" 'ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
fi

# Rust: this machine's toolchain, or for another arch the one RUST_SYSROOT names (whose rustc
# runs only on that arch: RUST_VERSION says its version)
if [ "$arch" = "$machine" ] && [ -z "${RUST_SYSROOT:-}" ]; then
  sysroot="$(rustc --print sysroot 2>/dev/null || true)"
  rust_version="$(rustc --version 2>/dev/null | awk '{ split($2, v, "."); print v[1] "." v[2] }')"
else
  sysroot="${RUST_SYSROOT:-}"
  rust_version="${RUST_VERSION:-}"
fi
if [ -z "$sysroot" ] || [ -z "$rust_version" ]; then
  if [ "$arch" = "$machine" ]; then
    echo "base-images: no Rust toolchain on this machine (rustc): Pingora's build needs one" >&2
  else
    echo "base-images: BASE_ARCH=$arch: give RUST_SYSROOT (an $arch Rust toolchain: rustup toolchain install" \
      "stable-$(arch_uname_of "$arch")-unknown-linux-gnu --force-non-host, then its sysroot) and RUST_VERSION (1.95)" >&2
  fi
  exit 1
fi
rust="proxybench-base/rust:$rust_version$suffix"
if ! have "$rust"; then
  echo "base-images: $rust: bookworm with build tools, and the Rust $rust_version of $sysroot ($arch)" >&2
  # as the official image: Rust in /usr/local/cargo, on PATH, beside buildpack-deps' tools
  # shellcheck disable=SC2016 # mmdebstrap's hooks expand "$1" (the new root) themselves
  mmdebstrap --quiet --variant=minbase --architectures="$arch" --aptopt='APT::Install-Recommends "false"' \
    --include=build-essential,ca-certificates,curl,git,make,pkg-config,dpkg-dev,file,xz-utils,procps \
    --customize-hook='mkdir -p "$1/usr/local/cargo"' \
    --customize-hook="sync-in '$sysroot' /usr/local/cargo" \
    --customize-hook='rm -rf "$1/usr/local/cargo/share/doc"' \
    --customize-hook="$trust_hook" \
    bookworm "$tmp/rootfs.tar" "$mirror"
  import "$rust" 'CMD ["bash"]' 'ENV CARGO_HOME=/usr/local/cargo' \
      'ENV PATH=/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
fi

# xk6, when XK6_BIN names one: an image holding it where grafana/xk6 holds its own
# (/usr/local/bin/xk6), for the Dockerfile's XK6_IMAGE; named by its sha256, so a new xk6 is a
# new image. Its build stage runs it beside Go (the tools stage), not as a program of its own.
if [ -n "${XK6_BIN:-}" ]; then
  [ -x "$XK6_BIN" ] || { echo "base-images: XK6_BIN=$XK6_BIN is not an executable file" >&2; exit 1; }
  xk6="proxybench-base/xk6:$(sha256sum "$XK6_BIN" | cut -c1-12)$suffix"
  if ! have "$xk6"; then
    mkdir -p "$tmp/root/usr/local/bin"
    cp "$XK6_BIN" "$tmp/root/usr/local/bin/xk6"
    tar -C "$tmp/root" --owner=0 --group=0 -cf "$tmp/rootfs.tar" usr
    rm -rf "$tmp/root"
    import "$xk6"
  fi
  echo "XK6_IMAGE=$xk6"
fi

echo "GOLANG_IMAGE=$golang"
echo "RUST_IMAGE=$rust"
echo "DEBIAN_IMAGE=$debian"
echo "TARGETARCH=$arch"
