#!/usr/bin/env bash
# The embedded (SQLite) restore drill of docs/operations.md, end to end on a scratch data dir:
# a running service with data (the end-to-end script makes a team, an endpoint, checks and an
# incident), an online backup of the event log and coordination store, the service stopped, a
# restore into a fresh data dir without the views, a start that rebuilds them from the log, and
# a comparison of what the API answers before and after.
#
#   .ci/restore-drill.sh      # needs the sqlite3 CLI (Debian: sqlite3) and a build (npm run build)
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d /tmp/restore-drill-XXXXXX)
export ADMIN_TOKEN=${ADMIN_TOKEN:-$(node -e 'process.stdout.write(require("node:crypto").randomBytes(32).toString("hex"))')}
PORT=${PORT:-13100}
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; echo "drill files: $WORK"; }
trap cleanup EXIT

serve() { # data dir
  DATA_DIR="$1" PORT="$PORT" HOST=127.0.0.1 LOG_LEVEL=warn node dist/src/main.js >>"$WORK/service.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 200); do curl -fs "http://127.0.0.1:$PORT/health/ready" >/dev/null 2>&1 && return 0; sleep 0.3; done
  echo "service not ready" >&2; return 1
}
api() { # method path [token]
  curl -fsS -X "$1" -H "authorization: Bearer ${3:-$ADMIN_TOKEN}" -H 'content-type: application/json' ${4:+--data "$4"} "http://127.0.0.1:$PORT$2"
}
snapshot() { # what the API answers: teams, the team's endpoints and incidents
  { api GET /api/v2/teams; echo; api GET /api/public/v2/endpoints "$TOKEN"; echo; api GET /api/public/v2/incidents "$TOKEN"; echo; } > "$1"
}

node src/cli/build-if-stale.mjs
echo "1. a running service with data"
serve "$WORK/data"
node .ci/e2e.mjs --api "http://127.0.0.1:$PORT" --step-timeout 120 >"$WORK/e2e.log"
# The script's target is gone: stop probing it, so nothing changes between backup and comparison.
api PATCH /api/v2/teams/1/endpoints/1 "" '{"enabled":false}' >/dev/null
TOKEN=$(api POST /api/v2/teams/1/tokens "" '{"name":"drill","role":"viewer","scopes":["monitoring:read","incidents:read"]}' | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).data.token))')
snapshot "$WORK/before.json"

echo "2. online backup while it runs (SQLite's backup API: a consistent copy, writers go on)"
mkdir -p "$WORK/backup"
for file in events coordination; do
  sqlite3 "$WORK/data/$file.sqlite" ".backup '$WORK/backup/$file.sqlite'"
done
sqlite3 "$WORK/backup/events.sqlite" 'PRAGMA integrity_check' | grep -qx ok
ls -l "$WORK/backup"

echo "3. stop, restore into a fresh data dir without the views"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
mkdir -p "$WORK/restored"
cp "$WORK/backup/events.sqlite" "$WORK/backup/coordination.sqlite" "$WORK/restored/"

echo "4. start on the restored dir: the views are rebuilt from the log"
start=$(date +%s)
serve "$WORK/restored"
DATA_DIR="$WORK/restored" node dist/src/cli/projections.js status
echo "ready after $(( $(date +%s) - start )) s"
snapshot "$WORK/after.json"

echo "5. compare"
diff "$WORK/before.json" "$WORK/after.json"
echo "restore drill passed: the restored service answers as the original did"
