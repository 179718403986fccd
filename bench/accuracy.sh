#!/bin/sh
# Accuracy check (issue 6): hedgebench's p50/p95 against hey's and wrk's, back
# to back at the same concurrency, on a local server (127.0.0.1, its own
# process) with a fixed 20 ms service time. Needs hey and wrk:
#   apt-get install -y hey wrk        (Debian/Ubuntu)
# Usage: sh bench/accuracy.sh    (from the repository root)
set -e
for tool in hey wrk; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "accuracy check needs hey and wrk; install them with: apt-get install -y hey wrk" >&2
    exit 1
  fi
done
npx tsc -p tsconfig.json
exec node dist/bench/bench.js --accuracy
