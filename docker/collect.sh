#!/usr/bin/env bash
# What the Dockerfile's final stage takes from a proxy's build stage, into /out:
#
#   /out/cache/bin/          the install cache's binaries, links resolved (a link may point into
#                            a build directory or a venv that the final stage does not have)
#   /out/cache/installed/    what the install script recorded (`make status` shows it)
#   /out/runtime-packages    the Debian packages of the libraries they link (ldd, then dpkg -S),
#                            which the final stage installs
#
# Run after the install script, in the stage where the libraries it links are installed; more
# binaries to look at may be given (the build stage's bin/*), and with no install cache only
# their packages are written.
set -euo pipefail
: "${PROXYBENCH_CACHE:?}"
shopt -s nullglob
mkdir -p /out/cache/bin
for f in "$PROXYBENCH_CACHE"/bin/*; do cp -L "$f" /out/cache/bin/; done
if [ -d "$PROXYBENCH_CACHE/installed" ]; then cp -a "$PROXYBENCH_CACHE/installed" /out/cache/; fi
bins=(/out/cache/bin/* "$@")
if [ "${#bins[@]}" -eq 0 ]; then
  : >/out/runtime-packages
  exit 0
fi
# ldd fails on a static binary (Go's), and dpkg -S on a library no package owns: neither is an error
{ ldd "${bins[@]}" 2>/dev/null || true; } | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
  { xargs -r dpkg -S 2>/dev/null || true; } | cut -d: -f1 | sort -u >/out/runtime-packages
