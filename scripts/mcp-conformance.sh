#!/usr/bin/env bash
# Scores the agent's MCP client with the official conformance suite
# (@modelcontextprotocol/conformance, pinned with the Node.js 22 it needs in
# tests/mcp-conformance/package-lock.json): every client scenario is run against
# tests/mcp-conformance/client.sh, which drives the `agent` binary, and the passed checks are
# counted. A report, not a test: scenarios the client does not take part in (elicitation,
# OAuth) fail by design. Usage: scripts/mcp-conformance.sh [scenario...]
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/tests/mcp-conformance"
(cd "$dir" && npm ci --no-audit --no-fund --silent)
(cd "$root" && cargo build --quiet -p agent-cli)
export AGENT_BIN="${CARGO_TARGET_DIR:-$root/target}/debug/agent"
node="$dir/node_modules/.bin/node"
suite="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"

if [ "$#" -gt 0 ]; then
  scenarios=("$@")
else
  mapfile -t scenarios < <("$node" "$suite" list | sed -n '/^Client scenarios/,$p' | sed -n 's/^  - \([^ ]*\) .*/\1/p')
fi

passed=0
checks=0
results="$dir/results"
rm -rf "$results"
for scenario in "${scenarios[@]}"; do
  out="$("$node" "$suite" client --command "$dir/client.sh" --scenario "$scenario" \
    --timeout 60000 -o "$results" 2>&1 || true)"
  line="$(grep -E '^Passed: [0-9]+/[0-9]+' <<<"$out" | tail -1)"
  if [ -z "$line" ]; then
    line="Passed: 0/1 (no result)"
  fi
  printf '%-48s %s\n' "$scenario" "$line"
  p="$(sed -E 's#^Passed: ([0-9]+)/([0-9]+).*#\1#' <<<"$line")"
  t="$(sed -E 's#^Passed: ([0-9]+)/([0-9]+).*#\2#' <<<"$line")"
  passed=$((passed + p))
  checks=$((checks + t))
done
echo "checks passed: $passed of $checks, over ${#scenarios[@]} client scenarios"
