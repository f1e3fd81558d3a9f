#!/usr/bin/env bash
# Builds the custom k6 (k6 v2 + every extension of this module) into $1, the k6 way when xk6 is
# given: XK6_BIN (the Makefile sets it from PATH when not given). Without xk6 it builds
# cmd/k6/main.go with go build: the main.go xk6 writes, so the binary is the same k6 with the same
# extensions. Both take k6's version from go.mod, the one pin.
set -euo pipefail
out=${1:?usage: extensions/build-k6.sh <output path>}
cd "$(dirname "$0")"
case $out in /*) ;; *) out=$OLDPWD/$out ;; esac
mkdir -p "$(dirname "$out")"
k6_version=$(awk '$1 == "go.k6.io/k6/v2" { print $2; exit }' go.mod)
[ -n "$k6_version" ] || { echo "build-k6: extensions/go.mod requires no go.k6.io/k6/v2: cannot tell which k6 to build" >&2; exit 1; }
module=$(awk '$1 == "module" { print $2; exit }' go.mod)
if [ -n "${XK6_BIN:-}" ]; then
	[ -x "$XK6_BIN" ] || { echo "build-k6: XK6_BIN=$XK6_BIN is not an executable file (unset it to build with go build)" >&2; exit 1; }
	"$XK6_BIN" build "$k6_version" --with "$module=." --output "$out"
else
	echo "build-k6: built with go build, not xk6: no xk6 given (XK6_BIN=<path>, or xk6 on PATH; the Go module proxy serves no xk6 that builds k6 v2)"
	go build -trimpath -o "$out" ./cmd/k6
fi
