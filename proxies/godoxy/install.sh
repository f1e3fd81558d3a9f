#!/usr/bin/env bash
# GoDoxy cannot be installed from the registries these machines reach: the
# Go module proxy refuses its module and no Debian, PyPI or npm package ships
# it. So this script downloads nothing. Given a release binary in GODOXY_BIN
# (or a `godoxy` on PATH), it links
#   $PROXYBENCH_CACHE/bin/godoxy-release -> that binary
#   $PROXYBENCH_CACHE/bin/proxybench-godoxy -> godoxy-run.sh (this folder)
# The stack starts `proxybench-godoxy`, the wrapper (named apart so that a bare `godoxy` on PATH
# is never started without its configuration), because GoDoxy has no flags and
# reads its configuration from fixed paths under its working directory
# (see godoxy-run.sh).
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../pins.sh

bindir="$PROXYBENCH_CACHE/bin"
if pins_mode; then
  pins_row "godoxy" "none: no registry serves it" "-" "GODOXY_BIN=${GODOXY_BIN:-(unset: not installed)}"
  exit 0
fi

real="${GODOXY_BIN:-}"
if [ -z "$real" ]; then
  candidate="$(command -v godoxy || true)"
  if [ -n "$candidate" ]; then
    real="$candidate"
  elif [ -x "$bindir/godoxy-release" ]; then
    # linked before: only the wrapper link needs renewing (e.g. a moved clone)
    real="$(readlink -f "$bindir/godoxy-release")"
  fi
fi
if [ -z "$real" ]; then
  echo "godoxy is not installed: download a release binary and set GODOXY_BIN=/path/to/godoxy or put it on PATH (the Go module proxy does not serve it)" >&2
  exit 1
fi
if [ ! -f "$real" ] || [ ! -x "$real" ]; then
  echo "install: GODOXY_BIN=$real is not an executable file" >&2
  exit 1
fi

mkdir -p "$bindir"
ln -sfn "$(readlink -f "$real")" "$bindir/godoxy-release"
ln -sfn "$PWD/godoxy-run.sh" "$bindir/proxybench-godoxy"
pins_record godoxy "godoxy release binary $(readlink -f "$real") (GODOXY_BIN; no registry serves it)"
"$bindir/proxybench-godoxy" --version
