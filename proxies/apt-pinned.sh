# shellcheck shell=bash
# Sourced by proxies/<name>/install.sh (and report/install-chromium.sh): installs
# Debian packages pinned by version without letting their maintainer scripts
# start system services.
#
#   apt_install_pinned BINARY PKG=VERSION [PKG=VERSION ...]
#
# (BINARY "-": the packages have no program to link, such as a font)
# - does nothing when every package is already installed at its version;
# - Debian replaces revisions at any time (security updates), and a mirror can
#   list a revision before its files download. So for each package, the first
#   that installs of: the pinned version, then the other versions of the same
#   upstream version the archive lists, newest first (APT_ANY_VERSION=1: any
#   version, for a package whose every security update is a new upstream
#   version, like chromium). A package installed at another revision of the
#   same upstream version is kept when the pin is gone. What was taken instead
#   of the pin is said in one line and recorded (pins.sh);
# - runs `apt-get update` only when a pinned version is not in the cache, or
#   once more when an install fails (a stale index);
# - blocks service starts with a temporary /usr/sbin/policy-rc.d (exit 101),
#   removed afterwards only if this script created it, and stops a daemon
#   whose pid file appeared during the install (belt and braces);
# - links BINARY into $PROXYBENCH_CACHE/bin so the stack finds it even when
#   /usr/sbin is not on PATH (non-root users).
# Under `make pins` (pins.sh) it prints one row per package and arch (proxies/arch.sh's
# PROXYBENCH_ARCHES) and installs nothing: the other arch's rows come from that arch's index of the
# machine's own sources, kept in $PROXYBENCH_CACHE/apt/ARCH (the machine's apt is left as it is).

# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/pins.sh"
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/arch.sh"

_apt_sudo() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# (nothing, and success, when it is not installed: callers run under set -e -o pipefail)
_apt_installed_version() {
  { dpkg-query -W -f='${db:Status-Status} ${Version}' "$1" 2>/dev/null || true; } | awk '$1 == "installed" { print $2 }'
}

# the versions of PKG the archive lists, newest first (for _APT_ARCH when set: another arch's)
_apt_versions() {
  _apt_cache madison "$1" 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | pins_newest_first
}

# _apt_cache ARGS...: apt-cache on the machine's index, or on _APT_ARCH's (another arch than the
# machine's, under `make pins`): its own lists and an empty dpkg status, so nothing installed here
# plays a part
_apt_cache() {
  if [ -z "${_APT_ARCH:-}" ]; then
    apt-cache "$@"
    return
  fi
  apt-cache "${_apt_arch_opts[@]}" "$@"
}

# _apt_arch_index ARCH: fetches ARCH's index of the machine's sources into the cache (once per
# run; apt fetches only what changed) and sets the options _apt_cache uses for it
_apt_arch_indexed=""
_apt_arch_index() {
  local arch="$1" dir="$PROXYBENCH_CACHE/apt/$1"
  _apt_arch_opts=(-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch"
    -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -o "Dir::State::status=$dir/status"
    -o "APT::Sandbox::User=$(id -un)") # the cache is ours: apt's _apt user may not write to it
  if [[ " $_apt_arch_indexed " == *" $arch "* ]]; then return 0; fi
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
  touch "$dir/status"
  if ! apt-get "${_apt_arch_opts[@]}" update -qq >&2; then
    echo "install: apt-get update of the $arch index (into $dir) failed" >&2
    return 1
  fi
  _apt_arch_indexed+=" $arch"
}

# _apt_candidates PKG PINNED: the versions to try, in order: the pin when
# listed, then the others of its upstream version (any, with APT_ANY_VERSION=1)
_apt_candidates() {
  local pkg="$1" pin="$2" v listed
  listed="$(_apt_versions "$pkg")"
  if grep -qxF "$pin" <<<"$listed"; then echo "$pin"; fi
  while read -r v; do
    if [ -z "$v" ] || [ "$v" = "$pin" ]; then continue; fi
    if [ "${APT_ANY_VERSION:-}" = 1 ] || [ "$(pins_upstream "$v")" = "$(pins_upstream "$pin")" ]; then
      echo "$v"
    fi
  done <<<"$listed"
}

# where the package put BINARY (not our own link in the cache), or nothing;
# "-" for a package without a program is always there
_apt_find_binary() {
  local dir
  if [ "$1" = - ]; then
    echo -
    return
  fi
  for dir in /usr/sbin /usr/bin /sbin /bin; do
    if [ -x "$dir/$1" ]; then
      echo "$dir/$1"
      return
    fi
  done
}

# _apt_get_install ARGS...: apt-get install with services kept from starting;
# pid files to watch in APT_PIDFILES
_apt_get_install() {
  local pidfile before=()
  for pidfile in ${APT_PIDFILES:-}; do
    if [ -e "$pidfile" ]; then before+=("$pidfile"); fi
  done

  local made_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\n# temporary, from proxybench install.sh: start no services\nexit 101\n' |
      _apt_sudo tee /usr/sbin/policy-rc.d >/dev/null
    _apt_sudo chmod 0755 /usr/sbin/policy-rc.d
    made_policy=1
    # interrupted: still leave the machine as it was
    trap '_apt_sudo rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  local rc=0
  _apt_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=300 "$@" || rc=$?
  if [ -n "$made_policy" ]; then
    _apt_sudo rm -f /usr/sbin/policy-rc.d
    trap - EXIT
  fi

  # a pid file that appeared during the install belongs to a daemon the
  # package started: stop exactly that pid
  for pidfile in ${APT_PIDFILES:-}; do
    if [ -e "$pidfile" ] && [[ " ${before[*]} " != *" $pidfile "* ]]; then
      local pid
      pid="$(head -n1 "$pidfile" | tr -dc 0-9)"
      if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        echo "install: stopping daemon $pid started by the package ($pidfile)" >&2
        _apt_sudo kill "$pid" || true
      fi
    fi
  done
  return "$rc"
}

_apt_updated=""
_apt_update() {
  if [ -n "$_apt_updated" ]; then return 0; fi
  _apt_updated=1
  _apt_sudo apt-get update -qq
}

# _apt_install_one PKG PIN [--reinstall]: the first candidate that installs;
# sets _apt_took to the version installed
_apt_install_one() {
  local pkg="$1" pin="$2" reinstall="${3:-}" v tried=()
  local candidates
  candidates="$(_apt_candidates "$pkg" "$pin")"
  if ! grep -qxF "$pin" <<<"$candidates"; then
    _apt_update
    candidates="$(_apt_candidates "$pkg" "$pin")"
  fi
  for v in $candidates; do
    # shellcheck disable=SC2086 # reinstall is empty or one word
    if _apt_get_install $reinstall "$pkg=$v" || { _apt_update && _apt_get_install $reinstall "$pkg=$v"; }; then
      _apt_took="$v"
      return 0
    fi
    tried+=("$v")
  done
  echo "install: $pkg: no version installs (pinned $pin; tried: ${tried[*]:-none listed of upstream $(pins_upstream "$pin")}); the archive lists:" >&2
  apt-cache policy "$pkg" >&2 || true
  echo "install: set the version variable named in the install script to one of them" >&2
  return 1
}

# apt_install_pinned BINARY PKG=VERSION... ; pid files to watch in APT_PIDFILES
apt_install_pinned() {
  local binary="$1"
  shift
  local spec pkg pin have took=()

  if pins_mode; then
    _apt_update
    local machine arch
    machine="$(arch_machine)"
    for arch in $PROXYBENCH_ARCHES; do
      # a version is one arch's build: a binNMU (+b1) or a security revision may reach one arch first
      _APT_ARCH=""
      if [ "$arch" != "$machine" ]; then
        _APT_ARCH="$arch"
        _apt_arch_index "$arch" || {
          for spec in "$@"; do
            pins_row "${spec%%=*} (Debian package, $arch)" "${spec#*=}" "-" "NOTHING: no $arch index (apt-get update failed)"
          done
          continue
        }
      fi
      for spec in "$@"; do
        pkg="${spec%%=*}" pin="${spec#*=}"
        local take
        take="$(_apt_candidates "$pkg" "$pin" | sed -n 1p)"
        [ "$take" != "$pin" ] || take="$pin (the pin)"
        pins_row "$pkg (Debian package, $arch)" "$pin" "archive: $(_apt_versions "$pkg" | paste -sd' ')" "${take:-NOTHING: no version of upstream $(pins_upstream "$pin") listed for $arch}"
      done
    done
    _APT_ARCH=""
    return 0
  fi

  for spec in "$@"; do
    pkg="${spec%%=*}" pin="${spec#*=}"
    have="$(_apt_installed_version "$pkg")"
    if [ "$have" = "$pin" ] && [ -n "$(_apt_find_binary "$binary")" ]; then
      took+=("$pkg=$have")
      continue
    fi
    if [ -n "$have" ] && [ -n "$(_apt_find_binary "$binary")" ] && ! grep -qxF "$pin" <<<"$(_apt_candidates "$pkg" "$pin")" &&
      { [ "${APT_ANY_VERSION:-}" = 1 ] || [ "$(pins_upstream "$have")" = "$(pins_upstream "$pin")" ]; }; then
      # the pin is gone from the archive: what is installed is as good as its replacement
      took+=("$pkg=$have (installed; pinned $pin is not in the archive)")
      continue
    fi
    local reinstall=""
    # installed at the right version, yet the binary is gone
    if [ "$have" = "$pin" ]; then reinstall=--reinstall; fi
    _apt_took=""
    _apt_install_one "$pkg" "$pin" "$reinstall" || return 1
    if [ "$_apt_took" = "$pin" ]; then
      took+=("$pkg=$_apt_took")
    else
      took+=("$pkg=$_apt_took (pinned $pin is not installable today)")
    fi
  done

  local path
  path="$(_apt_find_binary "$binary")"
  if [ -z "$path" ]; then
    echo "install: $binary not found after installing $*" >&2
    return 1
  fi
  if [ "$binary" = - ]; then binary="${1%%=*}"; else
    mkdir -p "$PROXYBENCH_CACHE/bin"
    ln -sfn "$path" "$PROXYBENCH_CACHE/bin/$binary"
  fi
  local joined
  joined="$(IFS=,; echo "${took[*]}")"
  pins_record "$binary" "${joined//,/, } from Debian's packages"
}
