# shellcheck shell=bash
# Sourced by proxies/<name>/install.sh: installs Debian packages pinned by
# version without letting their maintainer scripts start system services.
#
#   apt_install_pinned BINARY PKG=VERSION [PKG=VERSION ...]
#
# - does nothing when every package is already installed at its version;
# - runs `apt-get update` only when a pinned version is not in the cache;
# - blocks service starts with a temporary /usr/sbin/policy-rc.d (exit 101),
#   removed afterwards only if this script created it, and stops a daemon
#   whose pid file appeared during the install (belt and braces);
# - links BINARY into $PROXYBENCH_CACHE/bin so the stack finds it even when
#   /usr/sbin is not on PATH (non-root users).

PROXYBENCH_CACHE="${PROXYBENCH_CACHE:-$HOME/.cache/proxybench}"

_apt_sudo() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

_apt_installed_version() {
  dpkg-query -W -f='${db:Status-Status} ${Version}' "$1" 2>/dev/null | awk '$1 == "installed" { print $2 }'
}

_apt_in_cache() {
  # apt-cache show PKG=VER fails when that version is unknown to the cache
  apt-cache show "$1" >/dev/null 2>&1
}

# where the package put BINARY (not our own link in the cache), or nothing
_apt_find_binary() {
  local dir
  for dir in /usr/sbin /usr/bin /sbin /bin; do
    if [ -x "$dir/$1" ]; then
      echo "$dir/$1"
      return
    fi
  done
}

# apt_install_pinned BINARY PKG=VERSION... ; pid files to watch in APT_PIDFILES
apt_install_pinned() {
  local binary="$1"
  shift
  local spec missing=() reinstall=()
  for spec in "$@"; do
    if [ "$(_apt_installed_version "${spec%%=*}")" != "${spec#*=}" ]; then
      missing+=("$spec")
    fi
  done
  # installed at the right version, yet the binary is gone: reinstall
  if [ "${#missing[@]}" -eq 0 ] && [ -z "$(_apt_find_binary "$binary")" ]; then
    missing=("$@")
    reinstall=(--reinstall)
  fi

  if [ "${#missing[@]}" -gt 0 ]; then
    local updated=""
    for spec in "${missing[@]}"; do
      if ! _apt_in_cache "$spec"; then
        if [ -z "$updated" ]; then
          _apt_sudo apt-get update -qq
          updated=1
        fi
        if ! _apt_in_cache "$spec"; then
          echo "install: $spec is not available from apt; available:" >&2
          apt-cache policy "${spec%%=*}" >&2 || true
          echo "install: set the version variable named in install.sh to one of them" >&2
          return 1
        fi
      fi
    done

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
      -o DPkg::Lock::Timeout=300 "${reinstall[@]}" "${missing[@]}" || rc=$?
    if [ -n "$made_policy" ]; then
      _apt_sudo rm -f /usr/sbin/policy-rc.d
      trap - EXIT
    fi
    if [ "$rc" -ne 0 ]; then return "$rc"; fi

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
  fi

  local path
  path="$(_apt_find_binary "$binary")"
  if [ -z "$path" ]; then
    echo "install: $binary not found after installing $*" >&2
    return 1
  fi
  mkdir -p "$PROXYBENCH_CACHE/bin"
  ln -sfn "$path" "$PROXYBENCH_CACHE/bin/$binary"
}
