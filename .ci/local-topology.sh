#!/usr/bin/env bash
# The compose topology without Docker: a local nats-server and the built service's roles as
# processes on one host sharing one DATA_DIR (embedded stores, NATS for the probe queue),
# two of each role, then the end-to-end script with one projector killed midway.
#
#   .ci/local-topology.sh            # needs nats-server on PATH or in /usr/sbin, and `npm run build`
#
# Everything it starts is stopped on exit; logs stay in $WORK (printed).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d /tmp/local-topology-XXXXXX)
export ADMIN_TOKEN=${ADMIN_TOKEN:-$(node -e 'process.stdout.write(require("node:crypto").randomBytes(32).toString("hex"))')}
NATS=$(command -v nats-server || echo /usr/sbin/nats-server)
NATS_PORT=${NATS_PORT:-14222}
BASE_PORT=${BASE_PORT:-13000}
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "logs: $WORK"
}
trap cleanup EXIT

node src/cli/build-if-stale.mjs
"$NATS" -a 127.0.0.1 -p "$NATS_PORT" -js -sd "$WORK/nats" >"$WORK/nats.log" 2>&1 &
pids+=($!)

start() { # name role port
  DATA_DIR="$WORK/data" NATS_URL="nats://127.0.0.1:$NATS_PORT" ROLE="$2" PORT="$3" HOST=127.0.0.1 LOG_LEVEL=info \
    node dist/src/main.js >"$WORK/$1.log" 2>&1 &
  pids+=($!)
  echo "$!" >"$WORK/$1.pid"
}
# The first process creates the data dir; the others join it.
start api-1 api $((BASE_PORT + 0))
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$BASE_PORT/health/ready" >/dev/null 2>&1 && break; sleep 0.3; done
start api-2 api $((BASE_PORT + 1))
start projector-1 projector $((BASE_PORT + 2))
start projector-2 projector $((BASE_PORT + 3))
start scheduler-1 scheduler $((BASE_PORT + 4))
start scheduler-2 scheduler $((BASE_PORT + 5))
start prober-1 prober $((BASE_PORT + 6))
start prober-2 prober $((BASE_PORT + 7))

node .ci/e2e.mjs --api "http://127.0.0.1:$BASE_PORT" --api "http://127.0.0.1:$((BASE_PORT + 1))" \
  --kill-projector "kill -KILL \$(cat $WORK/projector-1.pid)" --step-timeout "${STEP_TIMEOUT:-180}"
