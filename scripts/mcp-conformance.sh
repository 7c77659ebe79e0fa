#!/usr/bin/env bash
# Scores the agent's MCP client with the official conformance suite
# (@modelcontextprotocol/conformance, pinned with the Node.js 22 it needs in
# tests/mcp-conformance/package-lock.json): every client scenario is run against
# tests/mcp-conformance/client.sh, which drives the `agent` binary, and the checks are counted.
#
# With --gate (as `cargo xtask ci` runs it) it fails when a scenario fails more checks than
# tests/mcp-conformance/expected-failures.txt allows it (none when unlisted), or gives no
# result; docs/mcp-conformance.md says why each allowed failure is there.
# Usage: scripts/mcp-conformance.sh [--gate] [scenario...]
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/tests/mcp-conformance"
gate=false
if [ "${1:-}" = "--gate" ]; then
  gate=true
  shift
fi
(cd "$dir" && npm ci --no-audit --no-fund --silent)
(cd "$root" && cargo build --quiet -p goaltree-cli --bin agent)
export AGENT_BIN="${CARGO_TARGET_DIR:-$root/target}/debug/agent"
node="$dir/node_modules/.bin/node"
suite="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"

if [ "$#" -gt 0 ]; then
  scenarios=("$@")
else
  mapfile -t scenarios < <("$node" "$suite" list | sed -n '/^Client scenarios/,$p' | sed -n 's/^  - \([^ ]*\) .*/\1/p')
fi

# The failures each scenario is allowed: `scenario count` lines, `#` starts a comment.
allowed() {
  sed -e 's/#.*//' "$dir/expected-failures.txt" | awk -v s="$1" '$1 == s { print $2; found = 1 } END { if (!found) print 0 }'
}

passed=0
checks=0
regressions=()
results="$dir/results"
rm -rf "$results"
for scenario in "${scenarios[@]}"; do
  out="$("$node" "$suite" client --command "$dir/client.sh" --scenario "$scenario" \
    --timeout 60000 -o "$results" 2>&1 || true)"
  line="$(grep -E '^Passed: [0-9]+/[0-9]+' <<<"$out" | tail -1)"
  if [ -z "$line" ]; then
    line="Passed: 0/1, 1 failed (no result)"
  fi
  printf '%-48s %s\n' "$scenario" "$line"
  p="$(sed -E 's#^Passed: ([0-9]+)/([0-9]+).*#\1#' <<<"$line")"
  t="$(sed -E 's#^Passed: ([0-9]+)/([0-9]+).*#\2#' <<<"$line")"
  passed=$((passed + p))
  checks=$((checks + t))
  if [ $((t - p)) -gt "$(allowed "$scenario")" ]; then
    regressions+=("$scenario")
  fi
done
echo "checks passed: $passed of $checks, over ${#scenarios[@]} client scenarios"
if $gate && [ "${#regressions[@]}" -gt 0 ]; then
  echo "more failed checks than tests/mcp-conformance/expected-failures.txt allows: ${regressions[*]}" >&2
  exit 1
fi
