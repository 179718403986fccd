#!/bin/bash
# 20 A/A pairs of real runs (the built-in pi target, -n 4000 -c 40) beside a CPU hog pinned to core 1, each pair
# compared alone: how many metric comparisons compare calls better or worse when nothing changed (docs/compare-and-ci.md).
# Usage: scripts/aa-pairs.sh [DIR]   (about 6 minutes on 2 cores; needs taskset and a built dist/)
set -eu
H="$(dirname "$0")/../bin/hedgebench.js"
D="${1:-$(mktemp -d)}"
mkdir -p "$D"
taskset -c 1 node -e 'const t = Date.now(); while (Date.now() - t < 1200000) {}' &
HOG=$!
trap 'kill $HOG 2>/dev/null || true' EXIT
for p in $(seq 1 20); do
  for ab in 1 2; do node "$H" --profile pi -n 4000 -c 40 --seed "$p$ab" --label "r$p-$ab" --out-dir "$D" -o json >/dev/null 2>>"$D/err.txt"; done
  node "$H" compare "$D"/*-r$p-1.json "$D"/*-r$p-2.json -o json >"$D/c$p.json" 2>/dev/null || true
done
D="$D" node -e '
const fs = require("fs"); const dir = process.env.D
let called = 0, judged = 0, all = 0, saturated = 0; const which = {}
for (let p = 1; p <= 20; p++) {
  const c = JSON.parse(fs.readFileSync(`${dir}/c${p}.json`, "utf8"))
  if (c.runs.some((r) => r.generatorSaturated)) saturated++
  for (const m of c.metrics) for (const ch of m.changes) {
    if (!ch) continue
    all++
    if (ch.verdict !== "not enough requests" && m.method !== "none") judged++
    if (/better|worse/.test(ch.verdict)) { called++; which[`${m.metric}: ${ch.verdict}`] = (which[`${m.metric}: ${ch.verdict}`] ?? 0) + 1 }
  }
}
console.log(`20 A/A pairs, ${saturated} with a saturated generator: ${called} of ${all} metric comparisons called better or worse (${judged} judged by an interval)`, which)'
