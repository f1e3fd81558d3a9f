#!/bin/sh
# proxybench-godoxy: lays out GoDoxy's fixed config directory, gives its API credentials of this
# run's own, then runs the real GoDoxy in place of this shell (exec: the stack keeps its pid).
#
#   proxybench-godoxy RENDERED_CONFIG   run GoDoxy (cwd: the target's run directory)
#   proxybench-godoxy --version         the real binary's version, as it prints it at start-up
#
# install.sh links this script as $PROXYBENCH_CACHE/bin/proxybench-godoxy and the
# real binary as $PROXYBENCH_CACHE/bin/godoxy-release. GoDoxy has no flags:
# it reads ./config/config.yml and its route files from ./config/, so the
# rendered file (two YAML documents, see godoxy.yml.tmpl) is split there.
set -eu

real="$(dirname "$0")/godoxy-release"
if [ ! -x "$real" ]; then
  echo "godoxy: $real is missing: make setup TARGETS=godoxy with GODOXY_BIN=/path/to/godoxy or GODOXY_RELEASE=vX.Y.Z" >&2
  exit 1
fi

# GoDoxy fetches icon lists from two CDNs at start, with no setting to stop it; Go's client sends
# any host but loopback through HTTPS_PROXY, so pointing it at a closed loopback port fails
# those fetches at once, with no DNS lookup. The upstream is reached directly: natively it is
# loopback, and under compose.bridge.yaml its address (target.json's env) is NO_PROXY's one host.
export HTTPS_PROXY=http://127.0.0.1:1 HTTP_PROXY=http://127.0.0.1:1 NO_PROXY="${PROXYBENCH_UPSTREAM_HOST:-}"

# random_hex N: N random bytes as hex, from the kernel
random_hex() { od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'; }

if [ "${1:-}" = "--version" ]; then
  # GoDoxy has no version flag (it would start serving), and its release build records the
  # version only where its start-up line prints it. So it starts in a scratch directory with a
  # config it rejects: it prints "GoDoxy version vX.Y.Z", then exits before it listens.
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  mkdir "$scratch/config"
  echo "proxybench_version_check: {}" >"$scratch/config/config.yml"
  # (within the stack's 10 s for a version, so a hang still leaves the output to read)
  out="$(if cd "$scratch"; then GODOXY_HTTP_ADDR=127.0.0.1:0 GODOXY_HTTPS_ADDR=127.0.0.1:0 \
    GODOXY_API_ADDR=127.0.0.1:0 timeout 5 "$real" 2>&1 </dev/null || true; fi)"
  v="$(printf '%s\n' "$out" | sed -n 's/.*GoDoxy version \(v[0-9][0-9A-Za-z.+-]*\).*/\1/p' | head -n1)"
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

# GoDoxy refuses to start its API (and so to start at all) without credentials. Fresh ones for
# every start, never a fixed password: readable only by you, in api-credentials beside the log.
GODOXY_API_USER=proxybench
GODOXY_API_PASSWORD="$(random_hex 24)"
# its login tokens' key (base64): random too, as GoDoxy itself would pick, but without its warning
GODOXY_API_JWT_SECRET="$(head -c 32 /dev/urandom | base64 -w0)"
if [ "${#GODOXY_API_PASSWORD}" -ne 48 ] || [ -z "$GODOXY_API_JWT_SECRET" ]; then
  echo "godoxy: could not read random bytes from /dev/urandom for the API credentials" >&2
  exit 1
fi
rm -f api-credentials
(umask 077 && printf 'GODOXY_API_USER=%s\nGODOXY_API_PASSWORD=%s\n' "$GODOXY_API_USER" "$GODOXY_API_PASSWORD" >api-credentials)
export GODOXY_API_USER GODOXY_API_PASSWORD GODOXY_API_JWT_SECRET
exec "$real"
