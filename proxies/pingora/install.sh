#!/usr/bin/env bash
# Builds proxybench-pingora, this folder's crate: a small reverse proxy on
# Cloudflare's Pingora (crates.io, pinned in Cargo.toml and Cargo.lock).
#
# - `cargo build --release --locked`: exactly the versions in Cargo.lock;
# - the target directory is under $PROXYBENCH_CACHE, not in the clone;
# - the binary is copied to $PROXYBENCH_CACHE/bin/proxybench-pingora with the
#   hash of the sources it was built from beside it: nothing is rebuilt while
#   Cargo.toml, Cargo.lock and src/ are unchanged.
#
# Needs Rust >= 1.85 (cargo), a C compiler, perl, make and cmake: pingora's
# "openssl" feature compiles OpenSSL from source (openssl-src, pinned in
# Cargo.lock; so no libssl-dev), and its compression compiles zlib-ng with
# cmake. A cold build took 7.5 minutes on 2 (shared) cores, most of it
# OpenSSL and pingora; a rebuild after a change to src/ reuses the target
# directory and takes well under a minute.
#
# A crate version on crates.io never changes, and Cargo.lock holds each one's
# sha256: the lock file is the pin.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../pins.sh

bin="$PROXYBENCH_CACHE/bin/proxybench-pingora"
stamp="$bin.source-sha256"
export CARGO_TARGET_DIR="$PROXYBENCH_CACHE/build/pingora-target"

source_hash() {
  find Cargo.toml Cargo.lock src -type f -print0 | LC_ALL=C sort -z |
    xargs -0 sha256sum | sha256sum | cut -d' ' -f1
}

pingora_version="$(awk '$0 == "name = \"pingora\"" { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)"
if pins_mode; then
  pins_row "pingora (crates.io)" "$pingora_version, Cargo.lock (sha256 per crate)" "immutable by version" "Cargo.lock as it is (--locked)"
  exit 0
fi

hash="$(source_hash)"
if [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$hash" ]; then
  exit 0
fi

missing=()
for tool in cargo cc perl make cmake; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install: building proxybench-pingora needs ${missing[*]}:" \
    "Rust >= 1.85 from rustup, and Debian's build-essential, perl and cmake" >&2
  exit 1
fi

echo "install: building proxybench-pingora (pingora from crates.io) in $CARGO_TARGET_DIR" >&2
cargo build --release --locked
mkdir -p "$PROXYBENCH_CACHE/bin"
cp -f "$CARGO_TARGET_DIR/release/proxybench-pingora" "$bin.tmp"
mv -f "$bin.tmp" "$bin"
echo "$hash" >"$stamp"
pins_record pingora "proxybench-pingora on pingora $pingora_version from crates.io (Cargo.lock, --locked)"
"$bin" --version
