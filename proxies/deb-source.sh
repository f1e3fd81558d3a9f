# shellcheck shell=bash
# Sourced by proxies/<name>/install.sh for proxies built from a newer Debian
# SOURCE package (Debian 13 "trixie") with bookworm's own toolchain and
# libraries, when bookworm's binary package lacks a feature (QUIC).
#
#   deb_build_deps PKG...                     install missing build dependencies
#   deb_source_tree SRCPKG WANT PIN DIR SPEC...
#                                             fresh DIR = the source, Debian patches applied
#   deb_source_pins SRCPKG WANT PIN SPEC...   the `make pins` row of that source
#   deb_build_current NAME STAMP              true when bin/NAME was built from STAMP
#   deb_build_install NAME FILE STAMP         copy FILE to bin/NAME, record STAMP
#
# WANT is the revision asked for (the install script's version variable), PIN
# the revision the script was written against, and each SPEC "SHA256 FILE" one
# of PIN's source files (its .dsc, tarballs and signatures), as in its .dsc.
#
# Debian replaces a revision at any time (security updates), and the mirror
# can list a new revision in its signed Sources index before its files are
# downloadable. So neither "exactly this revision through the index" nor "the
# newest in the index" builds on every day. In order, the first that works:
#   1. WANT = PIN: PIN's files by their pool path, each checked against its
#      sha256 here (no index needed: a withdrawn revision stays in the pool for
#      a while). WANT ≠ PIN: WANT through the signed index.
#   2. WANT ≠ PIN of the same upstream version: PIN's files, as in 1.
#   3. the newest revision of WANT's upstream version that the signed index
#      lists and whose files download (apt checks each against the index).
# The error, when none works, names every attempt. The revision built is said
# and recorded (pins.sh) for the manifest of `make bench`.
#
# The index is read with a private apt state ($PROXYBENCH_CACHE/apt-src:
# sources list, lists, cache): the machine's /etc/apt and /var/lib/apt are left
# alone, apt checks the index's signature against Debian's archive keyring, and
# no root is needed for this part. Downloads and builds live in
# $PROXYBENCH_CACHE/build. DEB_SOURCE_MIRROR and DEB_SOURCE_KEYRING point the
# whole of it at another archive (the tests' fake one).

# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/pins.sh"

DEB_SOURCE_SUITES="${DEB_SOURCE_SUITES:-trixie}"
DEB_SOURCE_MIRROR="${DEB_SOURCE_MIRROR:-http://deb.debian.org/debian}"
DEB_SOURCE_KEYRING="${DEB_SOURCE_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}"

_deb_sudo() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# apt-get / apt-cache / apt-helper with the private state
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
  local dir="$PROXYBENCH_CACHE/apt-src" suite list=""
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/sources.list.d" "$dir/preferences.d"
  touch "$dir/preferences"
  for suite in $DEB_SOURCE_SUITES; do
    list+="deb-src [signed-by=$DEB_SOURCE_KEYRING] $DEB_SOURCE_MIRROR $suite main"$'\n'
  done
  if [ "$(cat "$dir/sources.list" 2>/dev/null)"$'\n' != "$list" ]; then
    printf '%s' "$list" >"$dir/sources.list"
    rm -f "$dir/lists/"*_Sources* "$dir/lists/"*Release*
  fi
}

# once per process: a fresh signed index
_deb_index_updated=""
_deb_index_update() {
  if [ -n "$_deb_index_updated" ]; then return 0; fi
  _deb_index_updated=1
  _deb_apt_setup
  _deb_apt apt-get update -qq 2>&1 | sed 's/^/  /' >&2 || true
}

# the revisions of SRCPKG the signed index lists, newest first
_deb_index_versions() {
  _deb_apt apt-cache showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p' | pins_newest_first
}

# pool/main/h/haproxy, pool/main/libf/libfoo
_deb_pool_dir() {
  local pkg="$1" prefix="${1:0:1}"
  case "$pkg" in lib?*) prefix="${pkg:0:4}" ;; esac
  echo "$DEB_SOURCE_MIRROR/pool/main/$prefix/$pkg"
}

# the outcome of the last _deb_try_*: why it failed
_deb_why=""

# _deb_try_pool SRCPKG DL SPEC...: the pinned files by pool path into DL, each
# checked against its sha256 (a file already there and intact is kept)
_deb_try_pool() {
  local pkg="$1" dl="$2" spec sha file
  shift 2
  for spec in "$@"; do
    read -r sha file <<<"$spec"
    if [ -f "$dl/$file" ] && [ "$(sha256sum "$dl/$file" | cut -d' ' -f1)" = "$sha" ]; then
      continue
    fi
    local log
    if ! log="$(_deb_apt /usr/lib/apt/apt-helper download-file "$(_deb_pool_dir "$pkg")/$file" "$dl/$file" "SHA256:$sha" 2>&1)"; then
      rm -f "$dl/$file" "$dl/$file.FAILED"
      _deb_why="$file: $(printf '%s\n' "$log" | { grep -m1 -E '^(E|Err):' || true; } | sed -E 's/^(E|Err):[0-9]* *//; s/ *\[IP:[^]]*\]//')"
      [ "$_deb_why" != "$file: " ] || _deb_why="$file: download failed"
      return 1
    fi
  done
}

# _deb_try_index SRCPKG VERSION DL: VERSION through the signed index into DL
_deb_try_index() {
  local pkg="$1" version="$2" dl="$3" log
  _deb_index_update
  if ! grep -qx "Version: $version" <<<"$(_deb_apt apt-cache showsrc "$pkg" 2>/dev/null)"; then
    _deb_why="not in the signed index of $DEB_SOURCE_SUITES"
    return 1
  fi
  # apt-get source -d checks each file against the signed index and skips
  # those already downloaded and intact
  if ! log="$(cd "$dl" && _deb_apt apt-get source -d -qq "$pkg=$version" 2>&1)"; then
    _deb_why="listed, but its files do not download: $(printf '%s\n' "$log" | { grep -m1 -E '^E:' || true; } | sed -E 's/^E: *//; s/ *\[IP:[^]]*\]//')"
    return 1
  fi
}

# deb_source_resolve SRCPKG WANT PIN SPEC...: downloads the first revision that
# works (see the top of this file) into $PROXYBENCH_CACHE/build/dl; sets
# DEB_SOURCE_REVISION and DEB_SOURCE_HOW, or says every attempt and fails
deb_source_resolve() {
  local pkg="$1" want="$2" pin="$3"
  shift 3
  local dl="$PROXYBENCH_CACHE/build/dl" attempts=() tried=" " v
  mkdir -p "$dl"
  DEB_SOURCE_REVISION="" DEB_SOURCE_HOW=""

  if [ "$want" = "$pin" ]; then
    if _deb_try_pool "$pkg" "$dl" "$@"; then
      DEB_SOURCE_REVISION="$pin" DEB_SOURCE_HOW="pinned, files checked against their sha256"
      return 0
    fi
    attempts+=("$pin by its pinned sha256 from $(_deb_pool_dir "$pkg"): $_deb_why")
  else
    if _deb_try_index "$pkg" "$want" "$dl"; then
      DEB_SOURCE_REVISION="$want" DEB_SOURCE_HOW="as asked, through the signed index (the pin is $pin)"
      return 0
    fi
    attempts+=("$want through the signed index: $_deb_why")
    tried+="$want "
    if [ "$(pins_upstream "$want")" = "$(pins_upstream "$pin")" ]; then
      if _deb_try_pool "$pkg" "$dl" "$@"; then
        DEB_SOURCE_REVISION="$pin"
        DEB_SOURCE_HOW="the pin, files checked against their sha256, instead of $want (${attempts[0]#*: })"
        return 0
      fi
      attempts+=("$pin by its pinned sha256 from $(_deb_pool_dir "$pkg"): $_deb_why")
    fi
  fi
  tried+="$pin "

  local upstream others=0
  upstream="$(pins_upstream "$want")"
  _deb_index_update
  for v in $(_deb_index_versions "$pkg"); do
    if [ "$(pins_upstream "$v")" != "$upstream" ] || [[ "$tried" == *" $v "* ]]; then continue; fi
    others=$((others + 1))
    if _deb_try_index "$pkg" "$v" "$dl"; then
      DEB_SOURCE_REVISION="$v" DEB_SOURCE_HOW="newest of upstream $upstream in the signed index that downloads, instead of $want"
      return 0
    fi
    attempts+=("$v through the signed index: $_deb_why")
  done
  if [ "$others" -eq 0 ]; then
    attempts+=("the signed index of $DEB_SOURCE_SUITES lists no other revision of upstream $upstream")
  fi
  echo "install: no source of $pkg $upstream could be had:" >&2
  printf '  - %s\n' "${attempts[@]}" >&2
  echo "install: set the version variable named in install.sh to a revision that downloads" \
    "(\`make pins\` lists what the archive serves)" >&2
  return 1
}

# deb_source_tree SRCPKG WANT PIN DIR SPEC...: DIR (removed first) holds the
# unpacked source of the revision deb_source_resolve took, Debian patches
# applied; DEB_SOURCE_REVISION and DEB_SOURCE_HOW say which and why
deb_source_tree() {
  local pkg="$1" want="$2" pin="$3" dir="$4"
  shift 4
  deb_source_resolve "$pkg" "$want" "$pin" "$@" || return 1
  echo "install: $pkg source $DEB_SOURCE_REVISION ($DEB_SOURCE_HOW)" >&2
  rm -rf "$dir"
  dpkg-source --no-check -x "$PROXYBENCH_CACHE/build/dl/${pkg}_${DEB_SOURCE_REVISION#*:}.dsc" "$dir" >/dev/null
}

# deb_source_pins SRCPKG WANT PIN SPEC...: the `make pins` row: the pin, what
# the signed index lists now, and what an install would take (downloads kept
# in the cache, so the install that follows fetches nothing again)
deb_source_pins() {
  local pkg="$1" want="$2" pin="$3" now take
  _deb_index_update
  now="$(_deb_index_versions "$pkg" | paste -sd' ')"
  local errs
  errs="$(mktemp)"
  if deb_source_resolve "$@" 2>"$errs"; then
    take="$DEB_SOURCE_REVISION ($DEB_SOURCE_HOW)"
  else
    take="NOTHING: $(sed -n 's/^  - //p' "$errs" | paste -sd';')"
  fi
  rm -f "$errs"
  local pinned="$pin (sha256)"
  if [ "$want" != "$pin" ]; then pinned="$pinned, asked $want"; fi
  pins_row "$pkg source (Debian $DEB_SOURCE_SUITES)" "$pinned" "index: ${now:-none}" "$take"
}

# deb_build_deps PKG... : installs those not installed, from the machine's own
# sources (bookworm), at the version apt picks: -dev packages must match the
# runtime libraries already installed (libssl-dev = libssl3), so no pin here
deb_build_deps() {
  local pkg missing=()
  for pkg in "$@"; do
    if [ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" != installed ]; then
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
