#!/usr/bin/env bash
# A private Docker engine for the tests, never the machine's own:
#
#   docker/engine.sh start DIR   start dockerd (socket and exec root in DIR, data root under
#                                $PROXYBENCH_CACHE/docker/data so images and build layers are
#                                kept for the next run), wait until it answers, and print the
#                                environment that points the docker CLI at it
#   docker/engine.sh stop DIR    stop it, by the pid it wrote in DIR
#
# dockerd runs without iptables and without its default bridge, so nothing here changes the
# machine's firewall: compose.yaml's containers use the host's network, and compose.bridge.yaml's
# get a network of their own (a bridge compose creates), whose published ports docker-proxy (the
# userland proxy) forwards, since without iptables nothing else would. Needs root (dockerd does).
# Exit status 3: no engine can run here (not root, or docker/install.sh did not install one).
set -euo pipefail
# as the Makefile's default
: "${PROXYBENCH_CACHE:=$HOME/.cache/proxybench}"
cmd="${1:-}" dir="${2:-}"
[ -n "$dir" ] || { echo "usage: docker/engine.sh start|stop DIR" >&2; exit 2; }
bin="$PROXYBENCH_CACHE/bin"
data="$PROXYBENCH_CACHE/docker/data"

case "$cmd" in
start)
  if [ "$(id -u)" -ne 0 ]; then
    echo "engine: dockerd needs root (this is uid $(id -u))" >&2
    exit 3
  fi
  [ -x "$bin/dockerd" ] || { echo "engine: $bin/dockerd is missing: run docker/install.sh (make test-compose does)" >&2; exit 3; }
  mkdir -p "$dir/exec" "$dir/config" "$data"
  # one engine per data root: dockerd keeps this lock (fd 9, inherited) until it exits
  exec 9>"$data.lock"
  if ! flock -n 9; then
    echo "engine: another dockerd uses $data (a second make test-compose on this machine?): wait for it to end" >&2
    exit 1
  fi
  ln -sfn "$PROXYBENCH_CACHE/docker/cli-plugins" "$dir/config/cli-plugins"
  # the userland proxy of the same package as dockerd (Debian's docker.io), not one on PATH
  proxy="$(dirname "$(readlink -f "$bin/dockerd")")/docker-proxy"
  [ -x "$proxy" ] || { echo "engine: $proxy is missing: compose.bridge.yaml's published ports need it (docker/install.sh)" >&2; exit 1; }
  # overlay2 where the kernel has it, else vfs (slower, copies every layer)
  driver=vfs
  if grep -qw overlay /proc/filesystems; then driver=overlay2; fi
  "$bin/dockerd" --data-root "$data" --exec-root "$dir/exec" --pidfile "$dir/dockerd.pid" \
    --host "unix://$dir/docker.sock" --storage-driver "$driver" \
    --iptables=false --ip-masq=false --bridge=none --userland-proxy=true --userland-proxy-path "$proxy" \
    --containerd-namespace proxybench --containerd-plugins-namespace proxybench-plugins \
    >"$dir/dockerd.log" 2>&1 &
  echo $! >"$dir/dockerd.launched"
  for _ in $(seq 1 150); do
    if DOCKER_HOST="unix://$dir/docker.sock" "$bin/docker" version >/dev/null 2>&1; then
      echo "DOCKER_HOST=unix://$dir/docker.sock"
      echo "DOCKER_CONFIG=$dir/config"
      exit 0
    fi
    if ! kill -0 "$(cat "$dir/dockerd.launched")" 2>/dev/null; then break; fi
    sleep 0.2
  done
  echo "engine: dockerd did not answer on $dir/docker.sock; its log ends:" >&2
  tail -n 15 "$dir/dockerd.log" >&2
  "$0" stop "$dir" || true
  exit 1
  ;;
stop)
  pid="$(cat "$dir/dockerd.pid" 2>/dev/null || cat "$dir/dockerd.launched" 2>/dev/null || true)"
  if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
    # dockerd stops its containers and its containerd before it exits
    for _ in $(seq 1 150); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "engine: dockerd $pid did not stop within 30 s: killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  # what dockerd leaves mounted in its exec root (the default network namespace), so DIR can go
  awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r -n1 umount 2>/dev/null || true
  ;;
*)
  echo "usage: docker/engine.sh start|stop DIR" >&2
  exit 2
  ;;
esac
