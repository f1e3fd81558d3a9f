#!/usr/bin/env bash
# Installs Debian's chromium for report/browser_test.go (headless: --dump-dom, --screenshot), and
# DejaVu, a small font, so that text shows in the screenshots. Idempotent.
#
# Pinned to the version `apt-cache policy chromium` showed when this was written. Debian's
# security archive replaces chromium with every upstream release, so when the pin is gone the
# newest chromium the archive lists is taken (APT_ANY_VERSION=1: the test needs a browser, not
# this build), said in one line and recorded; the rules are those of proxies/apt-pinned.sh.
set -euo pipefail
cd "$(dirname "$0")"

CHROMIUM_VERSION="${CHROMIUM_VERSION:-156.0.8078.79-1~deb12u1}"
FONTS_VERSION="${FONTS_VERSION:-2.37-6}"

if ! command -v apt-get >/dev/null; then
	echo "install-chromium: no apt-get: install chromium $CHROMIUM_VERSION (Debian's package) yourself" >&2
	exit 1
fi
# shellcheck source=../proxies/apt-pinned.sh
. ../proxies/apt-pinned.sh

APT_PIDFILES="" apt_install_pinned - "fonts-dejavu-core=$FONTS_VERSION"
APT_PIDFILES="" APT_ANY_VERSION=1 apt_install_pinned chromium "chromium=$CHROMIUM_VERSION"
pins_mode || chromium --version
