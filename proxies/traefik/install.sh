#!/usr/bin/env bash
# Builds Traefik v3 from its module on the Go module proxy (no release
# download: the machines reach package registries only).
#
# `go install github.com/traefik/traefik/v3/cmd/traefik@VERSION` refuses a
# module whose go.mod has replace directives, so the module is downloaded
# as it is published, copied out of the (read-only) module cache into a
# writable build directory, and built there with its own go.mod and go.sum
# (-mod=readonly: exactly the versions go.sum pins). A cold build took 10
# minutes on 2 shared cores; Go's module and build caches bring a rebuild
# down to about 20 s (linking the 170 MB binary).
#
# Idempotent: nothing is done when $PROXYBENCH_CACHE/bin/traefik already
# reports the pinned version.
#
# A module version on the Go module proxy never changes (go.sum and the
# checksum database hold its hash), so the version pin is all it takes.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../pins.sh

TRAEFIK_VERSION="${TRAEFIK_VERSION:-v3.6.12}"
module="github.com/traefik/traefik/v3"
bin="$PROXYBENCH_CACHE/bin/traefik"

if pins_mode; then
  pins_go_module "$module" "$TRAEFIK_VERSION"
  exit 0
fi

installed_version() {
  # "Version:      v3.6.12"
  "$bin" version 2>/dev/null | awk '$1 == "Version:" { print $2; exit }'
}

if [ -x "$bin" ] && [ "$(installed_version)" = "$TRAEFIK_VERSION" ]; then
  exit 0
fi

command -v go >/dev/null || { echo "install: traefik is built from source and needs Go on PATH" >&2; exit 1; }

mkdir -p "$PROXYBENCH_CACHE/bin" "$PROXYBENCH_CACHE/build"
moddir="$(pins_go_download "$module@$TRAEFIK_VERSION" Dir)"
if [ -z "$moddir" ] || [ ! -f "$moddir/go.mod" ]; then
  echo "install: go mod download $module@$TRAEFIK_VERSION gave no module directory" >&2
  exit 1
fi

src="$PROXYBENCH_CACHE/build/traefik-$TRAEFIK_VERSION"
rm -rf "$src"
cp -R "$moddir" "$src"
chmod -R u+w "$src"

echo "install: building traefik $TRAEFIK_VERSION in $src" >&2
cd "$src"
# the same flags as Traefik's own Makefile (CGO off, version stamped in);
# -buildvcs=false: the copy is not a checkout
CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X $module/pkg/version.Version=$TRAEFIK_VERSION" \
  -o "$bin.tmp" ./cmd/traefik
mv -f "$bin.tmp" "$bin"
cd "$PROXYBENCH_CACHE/build"
rm -rf "$src"

got="$(installed_version)"
if [ "$got" != "$TRAEFIK_VERSION" ]; then
  echo "install: built traefik reports version '$got', want $TRAEFIK_VERSION" >&2
  exit 1
fi
pins_record traefik "traefik $TRAEFIK_VERSION built from the Go module proxy ($module, go.sum-checked)"
