#!/usr/bin/env bash
# Installs the reference MCP servers the agent-mcp and agent-cli tests run
# (@modelcontextprotocol/server-everything and server-filesystem, pinned by
# tests/mcp/package-lock.json) into tests/mcp/node_modules.
# Idempotent: does nothing when node_modules was installed from the current lockfile.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/tests/mcp"

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "setup-mcp: Node.js and npm are needed for the MCP tests and are not installed" >&2
  exit 1
fi

# A copy of the lockfile that node_modules was installed from; stale when it differs.
stamp="$dir/node_modules/.installed-package-lock.json"
if [ ! -f "$stamp" ] || ! cmp -s "$dir/package-lock.json" "$stamp"; then
  echo "setup-mcp: npm ci in tests/mcp" >&2
  (cd "$dir" && npm ci --no-audit --no-fund)
  cp "$dir/package-lock.json" "$stamp"
fi
