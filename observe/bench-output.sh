#!/usr/bin/env bash
# The cost of streaming to InfluxDB (issue 5, item 5): reused-h1c against the bare upstream
# (the direct target's h1c) at the client's highest rate, with our k6 output off, in aggregate
# mode and in raw mode, interleaved round by round so that the ratios compare runs made side by
# side. Prints req/s per run, the median per mode, the ratio to "off" and the points written
# per second. InfluxDB runs on this machine too (as in the native stack): in raw mode its own
# CPU use is part of the cost.
#
#   observe/bench-output.sh                     # 3 rounds, 10 s each, CONNECTIONS scanned (1 to 64, twice)
#   ROUNDS=5 DURATION=20s CONNECTIONS=8 observe/bench-output.sh
#
# Needs bin/k6, bin/upstream (make build) and influxd (make influxd). Uses its own ports
# (InfluxDB 127.0.0.1:18086, upstream 127.0.0.1:19123 by default) and its own run directory, so
# a stack that is up is not disturbed; stops what it started, by pid.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-2s}"
CONNECTIONS="${CONNECTIONS:-auto}"
INFLUXDB_ADDR="${BENCH_INFLUXDB_ADDR:-127.0.0.1:18086}"
UPSTREAM_PORT="${BENCH_UPSTREAM_PORT:-19123}"
export K6_NO_USAGE_REPORT=true K6_AUTO_EXTENSION_RESOLUTION=false

for b in bin/k6 bin/upstream; do
  [ -x "$b" ] || { echo "bench: $b is missing: make build" >&2; exit 1; }
done
tmp="$(mktemp -d)"
upstream_pid=""
cleanup() {
  PROXYBENCH_RUN="$tmp/run" "$tmp/observe" down >/dev/null 2>&1 || true
  if [ -n "$upstream_pid" ]; then kill "$upstream_pid" 2>/dev/null || true; wait "$upstream_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/observe" ./observe/cmd/observe
PROXYBENCH_RUN="$tmp/run" INFLUXDB_ADDR="$INFLUXDB_ADDR" INFLUXDB_BUCKET=bench "$tmp/observe" up
bin/upstream -h1c "127.0.0.1:$UPSTREAM_PORT" >"$tmp/upstream.log" 2>&1 &
upstream_pid=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$UPSTREAM_PORT/healthz" >/dev/null && break; sleep 0.1; done
cat >"$tmp/targets.json" <<JSON
{ "hostname": "bench.test", "address": "127.0.0.1", "workers": 1, "upstream_keepalive": 64,
  "upload_limit_bytes": 8388608, "upstream": { "h1c": $UPSTREAM_PORT },
  "targets": { "direct": { "tls": $((UPSTREAM_PORT + 1)), "h1c": $UPSTREAM_PORT } } }
JSON

# cpu_children FILE: user+sys seconds of the finished children of the shell that wrote FILE with
# `times >FILE` (a builtin: no subshell, whose counters would start at zero)
cpu_children() { tail -1 "$1" | awk '{ gsub(/s/, ""); split($1, u, "m"); split($2, s, "m"); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }'; }
# cpu_influxd: user+sys seconds InfluxDB has used so far
cpu_influxd() {
  local pid
  pid=$(python3 -c "import json; print(json.load(open('$tmp/run/influxdb/state.json'))['pid'])")
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$pid/stat"
}

# run MODE CONNECTIONS DURATION NAME: one k6 run; prints
# "req/s points write-requests dropped valid k6-cpu-s influxd-cpu-s http_reqs"
run() {
  local mode=$1 conns=$2 dur=$3 name=$4 out=() c0 c1 i0 i1
  case $mode in
    off) ;;
    aggregate|raw) out=(--out "proxybench-influxdb=http://$INFLUXDB_ADDR/bench?mode=$mode") ;;
  esac
  i0=$(cpu_influxd)
  times >"$tmp/$name.t0"
  TARGETS_FILE="$tmp/targets.json" DURATION="$dur" WARMUP="$WARMUP" CONNECTIONS="$conns" TESTID="$name" \
    SUMMARY_JSON="$tmp/$name.json" bin/k6 run --quiet "${out[@]}" scenarios/reused-h1c.js >"$tmp/$name.log" 2>&1 || {
    echo "bench: k6 run $name failed:" >&2; tail -20 "$tmp/$name.log" >&2; exit 1; }
  sleep 1 # InfluxDB finishes what it was sent
  times >"$tmp/$name.t1"
  c0=$(cpu_children "$tmp/$name.t0") c1=$(cpu_children "$tmp/$name.t1") i1=$(cpu_influxd)
  python3 - "$tmp/$name.json" "$tmp/$name.log" "$c0" "$c1" "$i0" "$i1" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
c0, c1, i0, i1 = map(float, sys.argv[3:7])
log = open(sys.argv[2]).read()
m = re.search(r'(\d+) points written to .* in (\d+) requests', log)
d = re.search(r'(\d+) of \d+ points DROPPED', log)
print(r['rps'], m.group(1) if m else 0, m.group(2) if m else 0, d.group(1) if d else 0, 'valid' if r['valid'] else 'INVALID',
      round(c1 - c0, 2), round(i1 - i0, 2), int(r['k6']['metrics']['http_reqs']['values']['count']))
PY
}

if [ "$CONNECTIONS" = auto ]; then
  # Each count twice, the two passes interleaved, so that one noisy run cannot pick it.
  declare -A sum=()
  for pass in 1 2; do
    for c in 1 2 4 8 16 32 64; do
      rps=$(run off "$c" 5s "scan-$c-$pass" | awk '{print $1}')
      echo "scan: $c connections, output off, pass $pass: $rps req/s"
      sum[$c]=$(python3 -c "print(${sum[$c]:-0} + $rps)")
    done
  done
  best=0
  for c in 1 2 4 8 16 32 64; do
    if python3 -c "import sys; sys.exit(0 if ${sum[$c]} > $best else 1)"; then best=${sum[$c]}; CONNECTIONS=$c; fi
  done
  echo "scan: highest rate with $CONNECTIONS connections ($(python3 -c "print(round($best / 2))") req/s, the mean of two passes)"
fi

seconds=$(python3 -c "
import re
def s(v):
    v = v.strip()
    if re.fullmatch(r'0+(ms|s|m|h)?', v): return 0.0
    return sum(float(n) * {'ms': .001, 's': 1, 'm': 60, 'h': 3600}[u] for n, u in re.findall(r'([\d.]+)(ms|s|m|h)', v))
w = s('$WARMUP')
print(s('$DURATION') + (w + 1 if w else 0))")

modes=(off aggregate raw)
printf '%-6s %-10s %10s %9s %9s %8s %8s %9s %9s\n' round mode req/s points points/s writes dropped k6-cpu-s db-cpu-s
for r in $(seq "$ROUNDS"); do
  for i in 0 1 2; do
    mode=${modes[$(((i + r - 1) % 3))]}
    read -r rps points reqs dropped valid k6cpu dbcpu total < <(run "$mode" "$CONNECTIONS" "$DURATION" "r$r-$mode")
    pps=$(python3 -c "print(round($points / $seconds))")
    printf '%-6s %-10s %10s %9s %9s %8s %8s %9s %9s %s\n' "$r" "$mode" "$rps" "$points" "$pps" "$reqs" "$dropped" \
      "$k6cpu" "$dbcpu" "$valid"
    echo "$mode $rps $pps $r $k6cpu $dbcpu $total" >>"$tmp/all"
  done
done
python3 - "$tmp/all" "$CONNECTIONS" "$DURATION" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for mode, rps, pps, rnd, k6cpu, dbcpu, total in rows:
    by.setdefault(mode, []).append(dict(rps=float(rps), pps=float(pps), rnd=int(rnd),
                                        k6us=float(k6cpu) / int(total) * 1e6, dbus=float(dbcpu) / int(total) * 1e6))
off = {v['rnd']: v['rps'] for v in by['off']}
med = statistics.median
print(f"\nreused-h1c, direct, {sys.argv[2]} connections, {sys.argv[3]} per run; medians over rounds; "
      "vs off = req/s over req/s with the output off in the same round; CPU µs per request (warm-up included)")
print(f"{'mode':<10} {'req/s':>8} {'vs off':>7}  {'per round':<36} {'points/s':>9} {'k6 CPU µs/req':>14} {'InfluxDB CPU µs/req':>20}")
for mode in ('off', 'aggregate', 'raw'):
    v = by[mode]
    ratios = [x['rps'] / off[x['rnd']] for x in v]
    print(f"{mode:<10} {med(x['rps'] for x in v):>8.0f} {med(ratios):>7.3f}  {' '.join(f'{r:.3f}' for r in ratios):<36} "
          f"{med(x['pps'] for x in v):>9.0f} {med(x['k6us'] for x in v):>14.1f} {med(x['dbus'] for x in v):>20.1f}")
PY
echo "(2 CPUs shared by k6, the upstream and InfluxDB; load average: $(cut -d' ' -f1-3 /proc/loadavg))"
