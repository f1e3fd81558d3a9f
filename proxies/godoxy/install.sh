#!/usr/bin/env bash
# GoDoxy is served by no registry these machines reach (the Go module proxy refuses its
# module; no Debian, PyPI or npm package ships it). Two ways in, both ending with
#   $PROXYBENCH_CACHE/bin/godoxy-release -> the real binary
#   $PROXYBENCH_CACHE/bin/proxybench-godoxy -> godoxy-run.sh (this folder)
# - GODOXY_BIN=/path/to/godoxy (or a `godoxy` on PATH): a binary you have, linked as it is.
# - GODOXY_RELEASE=vX.Y.Z (needs the internet): GoDoxy's official release binary for this
#   platform, downloaded and kept only if its sha256 is the one release.sha256 holds for it.
# The stack starts `proxybench-godoxy`, the wrapper (named apart so that a bare `godoxy` on
# PATH is never started without its configuration), because GoDoxy has no flags and reads its
# configuration from fixed paths under its working directory (see godoxy-run.sh).
#
# Tests point the download elsewhere: GODOXY_RELEASE_URL (default GoDoxy's GitHub releases)
# and GODOXY_RELEASE_SHA256 (default release.sha256 beside this script).
set -euo pipefail
# fetch_release runs in $(…): without this, a failed step inside it would go unnoticed
shopt -s inherit_errexit
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../pins.sh

bindir="$PROXYBENCH_CACHE/bin"
release_url="${GODOXY_RELEASE_URL:-https://github.com/yusing/godoxy/releases/download}"
sums="${GODOXY_RELEASE_SHA256:-$PWD/release.sha256}"

if pins_mode; then
  pins_row "godoxy" "none: no registry serves it" "-" \
    "GODOXY_BIN=${GODOXY_BIN:-(unset)} GODOXY_RELEASE=${GODOXY_RELEASE:-(unset)}"
  exit 0
fi

# release_asset: GoDoxy's name for this platform's server binary
release_asset() {
  case "$(uname -m)" in
  x86_64 | amd64) echo godoxy-linux-amd64 ;;
  aarch64 | arm64) echo godoxy-linux-arm64 ;;
  *)
    echo "install: GODOXY_RELEASE: GoDoxy publishes linux amd64 and arm64 binaries, not $(uname -m): build it and give GODOXY_BIN" >&2
    return 1
    ;;
  esac
}

# fetch_release VERSION: downloads VERSION's binary into the cache, verified, and prints its path
fetch_release() {
  local version="$1" asset want dir part got
  asset="$(release_asset)"
  if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
    echo "install: GODOXY_RELEASE=$version is not a release tag: give one like v0.31.0" >&2
    return 1
  fi
  if [ ! -r "$sums" ]; then
    echo "install: GODOXY_RELEASE=$version: cannot read the list of release sha256s $sums" >&2
    return 1
  fi
  # release.sha256 lines: "<sha256>  <tag>/<asset>", as sha256sum prints them
  want="$(tr -d '\r' <"$sums" | awk -v f="$version/$asset" '$1 !~ /^#/ && $2 == f { print tolower($1); exit }')"
  if [ -z "$want" ]; then
    echo "install: GODOXY_RELEASE=$version: $sums keeps no sha256 for $version/$asset, so nothing is downloaded." >&2
    echo "  Add the line \"<sha256>  $version/$asset\" from a source you trust (the release page's digest," >&2
    echo "  or sha256sum of the asset fetched on a trusted machine), or give GODOXY_BIN=/path/to/godoxy." >&2
    return 1
  fi
  dir="$PROXYBENCH_CACHE/godoxy/$version"
  if [ -f "$dir/$asset" ] && [ "$(sha256sum "$dir/$asset" | cut -d' ' -f1)" = "$want" ]; then
    echo "$dir/$asset"
    return 0
  fi
  mkdir -p "$dir"
  part="$(mktemp "$dir/.$asset.XXXXXX")"
  echo "install: godoxy: fetching $release_url/$version/$asset" >&2
  if ! command -v curl >/dev/null; then
    rm -f "$part"
    echo "install: GODOXY_RELEASE needs curl: apt-get install curl" >&2
    return 1
  fi
  # GODOXY_RELEASE_URL may be http (the tests' loopback server); a redirect may not drop to it
  if ! curl --fail --silent --show-error --location --proto '=https,http' --proto-redir '=https' --max-time 300 \
    --output "$part" "$release_url/$version/$asset"; then
    rm -f "$part"
    echo "install: GODOXY_RELEASE=$version: could not download $release_url/$version/$asset (is $version a GoDoxy release, and is the internet reachable?)" >&2
    return 1
  fi
  got="$(sha256sum "$part" | cut -d' ' -f1)"
  if [ "$got" != "$want" ]; then
    rm -f "$part"
    echo "install: GODOXY_RELEASE=$version: $asset has sha256 $got, but $sums says $want: refused, nothing kept" >&2
    return 1
  fi
  chmod 0755 "$part"
  mv -f "$part" "$dir/$asset"
  echo "$dir/$asset"
}

real="${GODOXY_BIN:-}"
if [ -n "${GODOXY_RELEASE:-}" ]; then
  if [ -n "$real" ]; then
    echo "install: give GODOXY_BIN or GODOXY_RELEASE, not both (GODOXY_BIN=$real, GODOXY_RELEASE=$GODOXY_RELEASE)" >&2
    exit 1
  fi
  real="$(fetch_release "$GODOXY_RELEASE")"
  from="godoxy $GODOXY_RELEASE release binary $(basename "$real") (sha256 $(sha256sum "$real" | cut -d' ' -f1), as release.sha256 says)"
fi
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
  echo "godoxy is not installed: give GODOXY_BIN=/path/to/godoxy, or GODOXY_RELEASE=vX.Y.Z to download GoDoxy's release binary (needs the internet; the Go module proxy does not serve it)" >&2
  exit 3 # given nothing: the stack says "not installed" (stack.ExitNotGiven), not "failed"
fi
if [ ! -f "$real" ] || [ ! -x "$real" ]; then
  echo "install: GODOXY_BIN=$real is not an executable file" >&2
  exit 1
fi

mkdir -p "$bindir"
ln -sfn "$(readlink -f "$real")" "$bindir/godoxy-release"
ln -sfn "$PWD/godoxy-run.sh" "$bindir/proxybench-godoxy"
pins_record godoxy "${from:-godoxy binary $(readlink -f "$real") (sha256 $(sha256sum "$real" | cut -d' ' -f1); GODOXY_BIN, no registry serves it)}"
"$bindir/proxybench-godoxy" --version
