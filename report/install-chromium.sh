#!/usr/bin/env bash
# Installs Debian's chromium for report/browser_test.go (headless: --dump-dom, --screenshot).
# Idempotent: does nothing when the pinned version is installed. Pinned to the version
# `apt-cache policy chromium` showed when this was written; Debian's security archive replaces
# chromium releases, so when the pinned one is gone the current candidate is installed with a
# warning that says to update CHROMIUM_VERSION (the test needs a browser, not this exact build).
set -euo pipefail

CHROMIUM_VERSION="${CHROMIUM_VERSION:-156.0.8078.79-1~deb12u1}"

installed() { dpkg-query -W -f='${Version}' chromium 2>/dev/null || true; }

# Text in the screenshots needs a font; DejaVu is small and Debian's default.
FONTS=fonts-dejavu-core
fonts_ok() { dpkg-query -W -f='${Status}' "$FONTS" 2>/dev/null | grep -q "install ok installed"; }

if [[ "$(installed)" == "$CHROMIUM_VERSION" ]] && command -v chromium >/dev/null && fonts_ok; then
	exit 0
fi
if ! command -v apt-get >/dev/null; then
	echo "install-chromium: no apt-get: install chromium $CHROMIUM_VERSION (Debian's package) yourself" >&2
	exit 1
fi
SUDO=""
if [[ "$(id -u)" != 0 ]]; then SUDO="sudo"; fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if apt-cache madison chromium | awk '{print $3}' | grep -qxF "$CHROMIUM_VERSION"; then
	$SUDO apt-get install -y -qq --no-install-recommends "chromium=$CHROMIUM_VERSION" "$FONTS"
else
	have="$(installed)"
	if [[ -n "$have" ]] && command -v chromium >/dev/null && fonts_ok; then
		echo "install-chromium: pinned $CHROMIUM_VERSION is no longer in the archive; keeping installed $have (update CHROMIUM_VERSION in report/install-chromium.sh)" >&2
		exit 0
	fi
	candidate="$(apt-cache policy chromium | awk '/Candidate:/ {print $2}')"
	echo "install-chromium: pinned $CHROMIUM_VERSION is no longer in the archive; installing candidate $candidate (update CHROMIUM_VERSION in report/install-chromium.sh)" >&2
	$SUDO apt-get install -y -qq --no-install-recommends chromium "$FONTS"
fi
chromium --version
