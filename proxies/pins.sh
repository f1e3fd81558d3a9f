# shellcheck shell=bash
# Sourced by every install script: what an install took, and the rows of `make pins`.
#
#   pins_mode                      true under `make pins` (PROXYBENCH_PINS=1): resolve, build nothing
#   pins_row WHAT PINNED NOW TAKE  one row of the `make pins` table (stdout, tab-separated)
#   pins_record NAME TEXT          says TEXT in one line and keeps it as what NAME was installed
#                                  from ($PROXYBENCH_CACHE/installed/NAME): `make bench`'s
#                                  manifest and `make status` read it
#   pins_go_download MOD@VER FIELD `go mod download` of one module from the Go module proxy
#                                  (checksum-checked), and one field of what it says: Dir, Sum…
#   pins_go_verified MOD VER SUM WHERE  the same, failing unless the module hash is SUM
#
# A registry can replace what a pin names at any time (Debian's security revisions), so an
# install may take something else than the pin; it must never do so silently.

PROXYBENCH_CACHE="${PROXYBENCH_CACHE:-$HOME/.cache/proxybench}"

pins_mode() { [ "${PROXYBENCH_PINS:-}" = 1 ]; }

pins_row() {
  printf 'pin\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4"
}

pins_record() {
  local name="$1" text="$2"
  echo "install: $name: $text" >&2
  mkdir -p "$PROXYBENCH_CACHE/installed"
  printf '%s\n' "$text" >"$PROXYBENCH_CACHE/installed/.$name.new"
  mv -f "$PROXYBENCH_CACHE/installed/.$name.new" "$PROXYBENCH_CACHE/installed/$name"
}

# Debian versions on stdin, newest first by dpkg's own ordering (`sort -V`
# knows nothing of ~ and epochs)
pins_newest_first() {
  local v out=()
  while read -r v; do
    [ -n "$v" ] || continue
    local i=${#out[@]}
    while [ "$i" -gt 0 ] && dpkg --compare-versions "$v" gt "${out[$((i - 1))]}"; do
      i=$((i - 1))
    done
    out=("${out[@]:0:$i}" "$v" "${out[@]:$i}")
  done < <(sort -u)
  if [ "${#out[@]}" -gt 0 ]; then printf '%s\n' "${out[@]}"; fi
}

# the upstream version of a Debian version: 1:1.26.3-3+deb13u7 -> 1.26.3
pins_upstream() {
  local v="${1#*:}"
  echo "${v%-*}"
}

# pins_go_download MODULE@VERSION FIELD: downloads one module into Go's module cache and prints
# one field of `go mod download -json` (Dir: where it is; Sum: its hash). Run from / so that no
# go.mod around the caller plays a part; nothing printed when the proxy serves none.
pins_go_download() {
  (cd / && GOFLAGS=-mod=mod go mod download -json "$1") | sed -n "s/^[[:space:]]*\"$2\": \"\(.*\)\",\$/\1/p"
}

# pins_go_verified MODULE VERSION SUM WHERE: downloads the module and fails, saying to set the
# pins named by WHERE, unless its module hash is SUM (a version re-tagged, or no longer served)
pins_go_verified() {
  local sum
  sum="$(pins_go_download "$1@$2" Sum)"
  if [ "$sum" != "$3" ]; then
    echo "install: $1@$2 has module hash ${sum:-none (not served)}, pinned $3:" \
      "set $4 to a version the Go module proxy serves" >&2
    return 1
  fi
}

# pins_go_module MODULE VERSION: the `make pins` row of a module built from
# the Go module proxy (which serves exact versions only: no listing to compare)
pins_go_module() {
  local module="$1" version="$2" take
  if (cd / && GOFLAGS=-mod=mod go list -m -json "$module@$version" >/dev/null 2>&1); then
    take="$version"
  else
    take="NOTHING: the Go module proxy does not serve $module@$version"
  fi
  pins_row "$module (Go module)" "$version" "immutable by version (go.sum)" "$take"
}
