#!/usr/bin/env bash
# Builds InfluxDB OSS 1.8 (influxd) from its module on the Go module proxy into
# $PROXYBENCH_CACHE/bin: no release download, the machines reach package registries only.
#
# Why 1.8.10: it is the newest InfluxDB whose module builds with `go install` alone. 1.8 still
# uses the pure-Go Flux (v0.65); later 1.x and 2.x link libflux (Rust, cgo) and fail to build
# here. 1.8 serves both InfluxQL (/query) and the v2 write API (/api/v2/write) our k6 output
# uses. It builds with the Go of this machine (1.26) as it is: its go.mod has no replace
# directives, so `go install pkg@version` works and no writable copy of the module is needed.
#
# Idempotent: nothing is done when $PROXYBENCH_CACHE/bin/influxd already reports the pinned
# version. Go's module and build caches make a rebuild take seconds.
set -euo pipefail
# shellcheck source=../proxies/pins.sh
. "$(dirname "$0")/../proxies/pins.sh"

INFLUXDB_VERSION="${INFLUXDB_VERSION:-1.8.10}"
module="github.com/influxdata/influxdb"
bin="$PROXYBENCH_CACHE/bin/influxd"

if pins_mode; then
  pins_go_module "$module" "v$INFLUXDB_VERSION"
  exit 0
fi

installed_version() {
  # "InfluxDB v1.8.10 (git: go-install v1.8.10)"
  "$bin" version 2>/dev/null | awk '$1 == "InfluxDB" { sub(/^v/, "", $2); print $2; exit }'
}

if [ -x "$bin" ] && [ "$(installed_version)" = "$INFLUXDB_VERSION" ]; then
  exit 0
fi

command -v go >/dev/null || { echo "install: influxd is built from source and needs Go on PATH" >&2; exit 1; }

mkdir -p "$PROXYBENCH_CACHE/bin"
# outside any module, so that a go.mod above the caller's directory plays no part
cd "$PROXYBENCH_CACHE"
echo "install: building influxd $INFLUXDB_VERSION (go install $module/cmd/influxd@v$INFLUXDB_VERSION)" >&2
# -buildvcs=false: nothing to stamp; the version is stamped the way InfluxDB's own build does
GOBIN="$PROXYBENCH_CACHE/bin.tmp.$$" CGO_ENABLED=0 GOFLAGS=-mod=mod \
  go install -trimpath -buildvcs=false \
  -ldflags "-s -w -X main.version=$INFLUXDB_VERSION -X main.branch=go-install -X main.commit=v$INFLUXDB_VERSION" \
  "$module/cmd/influxd@v$INFLUXDB_VERSION"
mv -f "$PROXYBENCH_CACHE/bin.tmp.$$/influxd" "$bin"
rmdir "$PROXYBENCH_CACHE/bin.tmp.$$"

got="$(installed_version)"
if [ "$got" != "$INFLUXDB_VERSION" ]; then
  echo "install: built influxd reports version '$got', want $INFLUXDB_VERSION" >&2
  exit 1
fi
pins_record influxd "influxd $INFLUXDB_VERSION built from the Go module proxy ($module, go.sum-checked)"
