#!/usr/bin/env bash
# Installs the linters `make lint` runs, pinned, into $PROXYBENCH_CACHE (never into the clone):
#
# - golangci-lint, built from the Go module proxy at a pinned version whose module hash is checked
#   before the build (the checksum database checks its dependencies): $PROXYBENCH_CACHE/lint/bin;
# - shellcheck, Debian's package (proxies/apt-pinned.sh), linked as $PROXYBENCH_CACHE/bin/shellcheck;
# - eslint, from the npm registry by lint/package-lock.json (every package's integrity hash),
#   `npm ci` into $PROXYBENCH_CACHE/lint/node; lint/eslint.config.js finds it through NODE_PATH.
#
# Idempotent: returns at once when everything is there at its pin.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../proxies/apt-pinned.sh

GOLANGCI_LINT_VERSION="${GOLANGCI_LINT_VERSION:-v2.15.0}"
GOLANGCI_LINT_MODULE_SUM="${GOLANGCI_LINT_MODULE_SUM:-h1:w94zf8HAYI7hm3164kwKsvZRuqXvY+YxeFoTbu1OLg8=}"
SHELLCHECK_DEB_VERSION="${SHELLCHECK_DEB_VERSION:-0.9.0-1}"
golangci_module=github.com/golangci/golangci-lint/v2
# eslint's version: package.json's exact pin (the lock file holds it and every dependency's hash)
eslint_version="$(sed -n 's/^[[:space:]]*"eslint": "\([^"^~]*\)",*$/\1/p' package.json)"

if pins_mode; then
  pins_go_module "$golangci_module" "$GOLANGCI_LINT_VERSION"
  apt_install_pinned shellcheck "shellcheck=$SHELLCHECK_DEB_VERSION"
  now="$(npm view eslint version 2>/dev/null || true)"
  if ! command -v npm >/dev/null; then
    take="NOTHING: no npm on this machine (node and npm are needed to install eslint)"
  elif [ -n "$(npm view "eslint@$eslint_version" version 2>/dev/null || true)" ]; then
    take="$eslint_version (lint/package-lock.json)"
  else
    take="NOTHING: the npm registry does not serve eslint@$eslint_version"
  fi
  pins_row "eslint (npm package)" "$eslint_version" "npm latest: ${now:-unknown}" "$take"
  exit 0
fi

# ShellCheck, Debian's package
APT_PIDFILES="" apt_install_pinned shellcheck "shellcheck=$SHELLCHECK_DEB_VERSION"

# golangci-lint: built from its module on the Go module proxy
# (built again when this machine's Go changes: golangci-lint loads code only as new as its own Go)
command -v go >/dev/null || { echo "install: golangci-lint is built from source and needs Go on PATH" >&2; exit 1; }
bin="$PROXYBENCH_CACHE/lint/bin/golangci-lint"
stamp="$GOLANGCI_LINT_VERSION $GOLANGCI_LINT_MODULE_SUM $(go env GOVERSION)"
if ! { [ -x "$bin" ] && [ "$(cat "$bin.version" 2>/dev/null)" = "$stamp" ]; }; then
  pins_go_verified "$golangci_module" "$GOLANGCI_LINT_VERSION" "$GOLANGCI_LINT_MODULE_SUM" \
    "GOLANGCI_LINT_VERSION and GOLANGCI_LINT_MODULE_SUM in lint/install.sh" || exit 1
  echo "install: building golangci-lint $GOLANGCI_LINT_VERSION from the Go module proxy" >&2
  gobin="$(mktemp -d)"
  trap 'rm -rf "$gobin"' EXIT
  # (`golangci-lint version` reads its version from the build info that `go install MOD@VER` writes)
  (cd / && GOBIN="$gobin" CGO_ENABLED=0 GOFLAGS=-mod=mod go install -trimpath -ldflags "-s -w" \
    "$golangci_module/cmd/golangci-lint@$GOLANGCI_LINT_VERSION")
  mkdir -p "$(dirname "$bin")"
  mv -f "$gobin/golangci-lint" "$bin"
  echo "$stamp" >"$bin.version"
  pins_record golangci-lint "golangci-lint $GOLANGCI_LINT_VERSION from the Go module proxy ($GOLANGCI_LINT_MODULE_SUM), built with $(go env GOVERSION)"
fi

# eslint: `npm ci` of lint/package-lock.json, done again only when the lock file changes
node_dir="$PROXYBENCH_CACHE/lint/node"
lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)"
if ! { [ -x "$node_dir/node_modules/.bin/eslint" ] && [ "$(cat "$node_dir/lock.sha256" 2>/dev/null)" = "$lock_sum" ]; }; then
  command -v npm >/dev/null || { echo "install: eslint comes from the npm registry and needs node and npm on PATH" >&2; exit 1; }
  echo "install: eslint $eslint_version from the npm registry (npm ci of lint/package-lock.json)" >&2
  mkdir -p "$node_dir"
  rm -f "$node_dir/lock.sha256"
  cp package.json package-lock.json "$node_dir/"
  # --ignore-scripts: nothing of a package runs at install time
  (cd "$node_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  echo "$lock_sum" >"$node_dir/lock.sha256"
  pins_record eslint "eslint $eslint_version from the npm registry (lint/package-lock.json, sha256 $lock_sum)"
fi
