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
#
# The versions are the Dockerfile's (its ARG defaults), but Rust's: no registry serves a Rust
# toolchain, so the one this machine has is taken and named. An image already there is kept.
# Needs DOCKER_HOST (engine.sh) and root (mmdebstrap).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=proxies/pins.sh
. proxies/pins.sh
docker="$PROXYBENCH_CACHE/bin/docker"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

arg_default() { sed -n "s/^ARG $1=//p" Dockerfile; }
have() { "$docker" image inspect "$1" >/dev/null 2>&1; }

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
  "$docker" import "${changes[@]}" "$tmp/rootfs.tar" "$name" >/dev/null
  rm -f "$tmp/rootfs.tar"
  echo "base-images: made $name" >&2
}

debian=proxybench-base/debian:bookworm
if ! have "$debian"; then
  echo "base-images: $debian from Debian's packages (mmdebstrap, minbase)" >&2
  # as the official slim image: no documentation, manual pages or translations
  mmdebstrap --quiet --variant=minbase --aptopt='APT::Install-Recommends "false"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook="$trust_hook" \
    bookworm "$tmp/rootfs.tar" "$mirror"
  import "$debian" 'CMD ["bash"]'
fi

go_version="$(arg_default GOLANG_IMAGE | sed -n 's/^golang:\([0-9.]*\)-bookworm$/\1/p')"
[ -n "$go_version" ] || { echo "base-images: the Dockerfile's GOLANG_IMAGE is not golang:X-bookworm" >&2; exit 1; }
golang="proxybench-base/golang:$go_version"
if ! have "$golang"; then
  echo "base-images: $golang from the Go module proxy (golang.org/toolchain)" >&2
  dir="$(pins_go_download "golang.org/toolchain@v0.0.1-go$go_version.linux-amd64" Dir)"
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

sysroot="$(rustc --print sysroot 2>/dev/null || true)"
rust_version="$(rustc --version 2>/dev/null | awk '{ split($2, v, "."); print v[1] "." v[2] }')"
if [ -z "$sysroot" ] || [ -z "$rust_version" ]; then
  echo "base-images: no Rust toolchain on this machine (rustc): Pingora's build needs one" >&2
  exit 1
fi
rust="proxybench-base/rust:$rust_version"
if ! have "$rust"; then
  echo "base-images: $rust: bookworm with build tools, and this machine's Rust $rust_version ($sysroot)" >&2
  # as the official image: Rust in /usr/local/cargo, on PATH, beside buildpack-deps' tools
  # shellcheck disable=SC2016 # mmdebstrap's hooks expand "$1" (the new root) themselves
  mmdebstrap --quiet --variant=minbase --aptopt='APT::Install-Recommends "false"' \
    --include=build-essential,ca-certificates,curl,git,make,pkg-config,dpkg-dev,file,xz-utils,procps \
    --customize-hook='mkdir -p "$1/usr/local/cargo"' \
    --customize-hook="sync-in '$sysroot' /usr/local/cargo" \
    --customize-hook='rm -rf "$1/usr/local/cargo/share/doc"' \
    --customize-hook="$trust_hook" \
    bookworm "$tmp/rootfs.tar" "$mirror"
  import "$rust" 'CMD ["bash"]' 'ENV CARGO_HOME=/usr/local/cargo' \
      'ENV PATH=/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
fi

echo "GOLANG_IMAGE=$golang"
echo "RUST_IMAGE=$rust"
echo "DEBIAN_IMAGE=$debian"
