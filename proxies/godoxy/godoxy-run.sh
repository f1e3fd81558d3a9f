#!/bin/sh
# proxybench-godoxy: lays out GoDoxy's fixed config directory, then runs
# the real GoDoxy in place of this shell (exec: the stack keeps its pid).
#
#   proxybench-godoxy RENDERED_CONFIG   run GoDoxy (cwd: the target's run directory)
#   proxybench-godoxy --version         the real binary's version, from its Go build info
#
# install.sh links this script as $PROXYBENCH_CACHE/bin/proxybench-godoxy and the
# real binary as $PROXYBENCH_CACHE/bin/godoxy-release. GoDoxy has no flags:
# it reads ./config/config.yml and its route files from ./config/, so the
# rendered file (two YAML documents, see godoxy.yml.tmpl) is split there.
set -eu

real="$(dirname "$0")/godoxy-release"
if [ ! -x "$real" ]; then
  echo "godoxy: $real is missing: run proxies/godoxy/install.sh with GODOXY_BIN set" >&2
  exit 1
fi

if [ "${1:-}" = "--version" ]; then
  # GoDoxy prints its version only in its start-up log; its Makefile stamps
  # it with -ldflags "-X <package>.version=vX.Y.Z", which Go records in the
  # binary's build info
  v=""
  if command -v go >/dev/null 2>&1; then
    v="$(go version -m "$real" 2>/dev/null |
      sed -n 's/.*-X [^ ]*\.version=\(v\{0,1\}[0-9][0-9A-Za-z.+-]*\).*/\1/p' | head -n1)"
  fi
  echo "godoxy ${v:-version unknown}"
  exit 0
fi

if [ "$#" -ne 1 ] || [ ! -f "$1" ]; then
  echo "usage: proxybench-godoxy RENDERED_CONFIG | proxybench-godoxy --version" >&2
  exit 2
fi

mkdir -p config
rm -f config/config.yml config/bench.yml
# first document (up to a line "---") -> config.yml, the rest -> bench.yml
awk 'BEGIN { out = "config/config.yml" }
     !second && $0 == "---" { close(out); out = "config/bench.yml"; second = 1; next }
     { print > out }' "$1"
if [ ! -s config/bench.yml ]; then
  echo "godoxy: $1 has no second YAML document (the route file)" >&2
  exit 1
fi
exec "$real"
