#!/bin/sh
# CPU per request of hedgebench (and the Node floor client) over a fixed
# window of a long run, for the "user CPU per request" figures of docs/benchmarks.md:
# the server pinned to core 0, each client to core 1, user and system time
# of the client process read from /proc between seconds 6 and 18 of a
# 60,000-request plain run at -c 40 against the 20 ms echo server. The rate
# is set by the server (40 in flight / ~20.5 ms), read from the run's own
# JSON. Steadier than the bench's marginal CPU: no start-up, no warm-up, no
# end of run. Linux only (taskset, /proc); 127.0.0.1 only.
#
#   sh bench/steady-cpu.sh [ROUNDS] [BUILD_DIR...]
#
# BUILD_DIRs are checkouts whose dist/ is built (default: this one), run in
# turn each round, so that two builds can be compared side by side.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
[ $# -gt 0 ] && shift
[ $# -eq 0 ] && set -- "$here"
tick=$(getconf CLK_TCK)
port=18391
taskset -c 0 node "$here/dist/bench/echo-server.js" --delay-ms 20 --port $port >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
sleep 1
young="--min-semi-space-size=32 --max-semi-space-size=32"

# window LABEL JSON_OUT command...: prints user and system µs per request in seconds 6-18
window() {
  label=$1; out=$2; shift 2
  taskset -c 1 "$@" > "$out" &
  pid=$!
  sleep 6; a=$(awk '{print $14, $15}' /proc/$pid/stat)
  sleep 12; b=$(awk '{print $14, $15}' /proc/$pid/stat)
  wait $pid
  rate=$(node -e "const o=JSON.parse(require('fs').readFileSync('$out','utf8')); console.log(o.phases ? o.phases.plain.requests / (o.phases.plain.durationMs / 1000) : o.requests / (o.durationMs / 1000))")
  echo "$a $b $rate $tick" | awk -v l="$label" '{printf "%-40s user %5.1f  sys %5.1f µs/request\n", l, ($3-$1)*1e6/$6/(12*$5), ($4-$2)*1e6/$6/(12*$5)}'
}

tmp=$(mktemp -d)
for r in $(seq 1 "$rounds"); do
  for dir in "$@"; do
    HEDGEBENCH_LAUNCHED=1 window "round $r hedgebench $(basename "$dir")" "$tmp/hb.json" node $young "$dir/bin/hedgebench.js" --mode plain -c 40 -n 60000 --no-save -o json http://127.0.0.1:$port/
  done
  window "round $r node floor" "$tmp/floor.json" node $young "$here/dist/bench/floor-client.js" http://127.0.0.1:$port/ 40 60000 1000
done
rm -rf "$tmp"
