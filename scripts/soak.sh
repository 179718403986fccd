#!/bin/bash
# The soak of docs/watch.md: `watch -q 1000 -z 1h` against simulated replicas (hedgebench serve, pinned to core 0), the
# watch pinned to core 1, its RSS and heap sampled every 10 s into DIR/memory.csv (scripts/soak-probe.mjs, preloaded),
# then RSS at 1/10/30/60 min and the least-squares slope per hour (scripts/soak-fit.mjs) into DIR/summary.txt.
# Usage: scripts/soak.sh [DIR] [DURATION] [RATE]   (defaults: a new temporary directory, 1h, 1000; needs taskset and a
# built dist/). Start it with nohup in the background: it takes DURATION plus the warm-up.
set -eu
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
D="${1:-$(mktemp -d)}"
Z="${2:-1h}"
Q="${3:-1000}"
mkdir -p "$D"
{ date -u '+started %Y-%m-%dT%H:%M:%SZ'; echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"; echo "watch -q $Q -z $Z"; } >"$D/meta.txt"

taskset -c 0 node "$ROOT/bin/hedgebench.js" serve --profile pi >"$D/serve.out" 2>"$D/serve.err" &
SERVE=$!
trap 'kill $SERVE 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  [ "$(grep -c '^http' "$D/serve.out" || true)" -ge 3 ] && break
  sleep 0.1
done
mapfile -t URLS < <(grep '^http' "$D/serve.out")

# The young-generation flags the launcher would start the watch with (src/cli/launcher.ts): given here, so that the
# watch runs in this node (the one whose memory the probe reads) and not in a child the launcher would start.
read -r -a FLAGS < <(cd "$ROOT" && node -e "import('./dist/src/cli/launcher.js').then((m) => console.log(m.YOUNG_GENERATION_FLAGS.join(' ')))")
SOAK_CSV="$D/memory.csv" SOAK_EVERY_S=10 taskset -c 1 node "${FLAGS[@]}" --import "$ROOT/scripts/soak-probe.mjs" \
  "$ROOT/bin/hedgebench.js" watch "${URLS[@]}" -q "$Q" -z "$Z" --label soak --out-dir "$D" \
  --metrics-port 127.0.0.1:0 -o json >"$D/watch.json" 2>"$D/watch.err" && RC=0 || RC=$?

{ date -u '+finished %Y-%m-%dT%H:%M:%SZ'; echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"; echo "watch exit code $RC"; } >>"$D/meta.txt"
node "$ROOT/scripts/soak-fit.mjs" "$D/memory.csv" | tee "$D/summary.txt"
