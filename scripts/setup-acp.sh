#!/usr/bin/env bash
# Installs the ACP client SDK the agent-cli `agent acp` test drives the agent with
# (@agentclientprotocol/sdk, pinned by
# tests/acp/package-lock.json) into tests/acp/node_modules.
# Idempotent: does nothing when node_modules was installed from the current lockfile.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/tests/acp"

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "setup-acp: Node.js and npm are needed for the ACP test and are not installed" >&2
  exit 1
fi

# A copy of the lockfile that node_modules was installed from; stale when it differs.
stamp="$dir/node_modules/.installed-package-lock.json"
if [ ! -f "$stamp" ] || ! cmp -s "$dir/package-lock.json" "$stamp"; then
  echo "setup-acp: npm ci in tests/acp" >&2
  (cd "$dir" && npm ci --no-audit --no-fund)
  cp "$dir/package-lock.json" "$stamp"
fi
