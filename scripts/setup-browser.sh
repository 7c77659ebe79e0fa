#!/usr/bin/env bash
# Installs what the viewer's browser test (tests/browser) needs: Debian's chromium at
# /usr/bin/chromium, and the test's npm packages (playwright-core, which downloads no browser).
# Idempotent: does nothing when chromium is there and node_modules matches package-lock.json.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/tests/browser"

if [ ! -x /usr/bin/chromium ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup-browser: installing Debian's chromium" >&2
  $sudo apt-get update
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi

if ! command -v npm >/dev/null 2>&1; then
  echo "setup-browser: npm (Node.js) is needed for the browser test and is not installed" >&2
  exit 1
fi

# npm ci writes node_modules/.package-lock.json; it is stale when the lockfile is newer.
installed="$dir/node_modules/.package-lock.json"
if [ ! -f "$installed" ] || [ "$dir/package-lock.json" -nt "$installed" ]; then
  echo "setup-browser: npm ci in tests/browser" >&2
  (cd "$dir" && npm ci --no-audit --no-fund)
fi
