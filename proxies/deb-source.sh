# shellcheck shell=bash
# Sourced by proxies/<name>/install.sh for proxies built from a newer Debian
# SOURCE package (Debian 13 "trixie") with bookworm's own toolchain and
# libraries, when bookworm's binary package lacks a feature (QUIC).
#
#   deb_build_deps PKG...               install missing build dependencies
#   deb_source_tree SRCPKG VERSION DIR  fresh DIR = the source, Debian patches applied
#   deb_build_current NAME STAMP        true when bin/NAME was built from STAMP
#   deb_build_install NAME FILE STAMP   copy FILE to bin/NAME, record STAMP
#
# Sources come from deb.debian.org through apt with a private state of its own
# ($PROXYBENCH_CACHE/apt-src: sources list, lists, cache): the machine's
# /etc/apt and /var/lib/apt are left alone, apt checks every file against the
# signed Sources index (Debian's archive keyring), and no root is needed for
# this part. Everything built lives in $PROXYBENCH_CACHE/build.

PROXYBENCH_CACHE="${PROXYBENCH_CACHE:-$HOME/.cache/proxybench}"
DEB_SOURCE_SUITES="${DEB_SOURCE_SUITES:-trixie}"

_deb_sudo() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# apt-get / apt-cache with the private state
_deb_apt() {
  local tool="$1" dir="$PROXYBENCH_CACHE/apt-src"
  shift
  "$tool" -q \
    -o Dir::Etc::SourceList="$dir/sources.list" \
    -o Dir::Etc::SourceParts="$dir/sources.list.d" \
    -o Dir::Etc::Preferences="$dir/preferences" \
    -o Dir::Etc::PreferencesParts="$dir/preferences.d" \
    -o Dir::State::Lists="$dir/lists" \
    -o Dir::Cache="$dir/cache" \
    -o Debug::NoLocking=1 \
    -o APT::Sandbox::User="$(id -un)" \
    "$@"
}

_deb_apt_setup() {
  local dir="$PROXYBENCH_CACHE/apt-src" suite uri list=""
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/sources.list.d" "$dir/preferences.d"
  touch "$dir/preferences"
  for suite in $DEB_SOURCE_SUITES; do
    uri=http://deb.debian.org/debian
    case "$suite" in *-security) uri=http://deb.debian.org/debian-security ;; esac
    list+="deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main"$'\n'
  done
  if [ "$(cat "$dir/sources.list" 2>/dev/null)"$'\n' != "$list" ]; then
    printf '%s' "$list" >"$dir/sources.list"
  fi
}

# deb_build_deps PKG... : installs those not installed, from the machine's own
# sources (bookworm), at the version apt picks: -dev packages must match the
# runtime libraries already installed (libssl-dev = libssl3), so no pin here
deb_build_deps() {
  local pkg missing=()
  for pkg in "$@"; do
    if ! dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null | grep -qx installed; then
      missing+=("$pkg")
    fi
  done
  if [ "${#missing[@]}" -eq 0 ]; then return 0; fi
  echo "install: build dependencies: ${missing[*]}" >&2
  if ! _deb_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=300 "${missing[@]}"; then
    _deb_sudo apt-get update -qq
    _deb_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      -o DPkg::Lock::Timeout=300 "${missing[@]}"
  fi
}

# deb_source_tree SRCPKG VERSION DIR: DIR (removed first) holds the unpacked
# source package with its Debian patches applied
deb_source_tree() {
  local pkg="$1" version="$2" dir="$3" dl="$PROXYBENCH_CACHE/build/dl"
  _deb_apt_setup
  if ! _deb_apt apt-cache showsrc "$pkg" 2>/dev/null | grep -qx "Version: $version"; then
    _deb_apt apt-get update -qq
    if ! _deb_apt apt-cache showsrc "$pkg" 2>/dev/null | grep -qx "Version: $version"; then
      echo "install: source $pkg=$version is not in $DEB_SOURCE_SUITES; available:" >&2
      _deb_apt apt-cache showsrc "$pkg" 2>/dev/null | sed -n 's/^Version: /  /p' >&2
      echo "install: set the version variable named in install.sh to one of them" >&2
      return 1
    fi
  fi
  mkdir -p "$dl"
  # apt-get source -d verifies each file's hash against the signed index and
  # skips files already downloaded and intact
  (cd "$dl" && _deb_apt apt-get source -d -qq "$pkg=$version" >/dev/null)
  rm -rf "$dir"
  dpkg-source --no-check -x "$dl/${pkg}_${version#*:}.dsc" "$dir" >/dev/null
}

deb_build_current() {
  [ -x "$PROXYBENCH_CACHE/bin/$1" ] &&
    [ "$(cat "$PROXYBENCH_CACHE/build/$1.stamp" 2>/dev/null)" = "$2" ]
}

deb_build_install() {
  local name="$1" file="$2" stamp="$3"
  mkdir -p "$PROXYBENCH_CACHE/bin"
  install -m 0755 "$file" "$PROXYBENCH_CACHE/bin/.$name.new"
  mv -f "$PROXYBENCH_CACHE/bin/.$name.new" "$PROXYBENCH_CACHE/bin/$name"
  printf '%s\n' "$stamp" >"$PROXYBENCH_CACHE/build/$name.stamp"
}
