#!/usr/bin/env bash
# Unpacks a Grafana tarball (GRAFANA_TARBALL, this machine's linux-amd64 or linux-arm64 build: grafana/bin/grafana-server,
# conf/, public/) into the install cache once, checking the sha256 file beside it when there is
# one, and prints the Grafana home directory. No registry these machines reach serves Grafana:
# the tarball is given, never downloaded.
set -euo pipefail

# shellcheck source=../proxies/arch.sh
. "$(dirname "$0")/../proxies/arch.sh"
arch="$(arch_go)"

tarball="${GRAFANA_TARBALL:?GRAFANA_TARBALL=<path of grafana-VERSION-linux-$arch.tar.xz>}"
cache="${PROXYBENCH_CACHE:-$HOME/.cache/proxybench}"
if [ ! -f "$tarball" ]; then
	echo "install-grafana: GRAFANA_TARBALL=$tarball: no such file" >&2
	exit 1
fi
name="$(basename "$tarball")"
name="${name%.tar.*}"
# a tarball named for the other arch would unpack fine and fail only when Grafana starts
case "$name" in
*linux-amd64* | *linux-arm64*)
	if [[ "$name" != *"linux-$arch"* ]]; then
		echo "install-grafana: $tarball is another machine's build: this one ($arch) takes grafana-VERSION-linux-$arch" >&2
		exit 1
	fi
	;;
esac
dest="$cache/grafana/$name"
if [ -x "$dest/grafana/bin/grafana-server" ] || [ -x "$dest/grafana/bin/grafana" ]; then
	echo "$dest/grafana"
	exit 0
fi
if [ -f "$tarball.sha256" ]; then
	want="$(awk '{ print $1; exit }' "$tarball.sha256")"
	got="$(sha256sum "$tarball" | awk '{ print $1 }')"
	if [ "$want" != "$got" ]; then
		echo "install-grafana: $tarball: sha256 $got, $tarball.sha256 says $want" >&2
		exit 1
	fi
fi
# unpacked beside, then moved: an interrupted unpack never looks installed
mkdir -p "$cache/grafana"
tmp="$(mktemp -d "$cache/grafana/.unpack.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$tarball" -C "$tmp"
if [ ! -d "$tmp/grafana" ]; then
	echo "install-grafana: $tarball has no grafana/ directory" >&2
	exit 1
fi
rm -rf "$dest"
mkdir -p "$dest"
mv "$tmp/grafana" "$dest/grafana"
echo "$dest/grafana"
