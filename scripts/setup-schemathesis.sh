#!/usr/bin/env bash
# Installs schemathesis, pinned, from PyPI into a virtualenv under the cargo target folder, for
# tests/it/hostile_http.rs (which also runs this script when the virtualenv is missing).
# Idempotent: does nothing when that version is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=4.32.5
TARGET="${CARGO_TARGET_DIR:-target}"
VENV="$TARGET/schemathesis-venv"
if [ -x "$VENV/bin/schemathesis" ] && [ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null)" = "$VERSION" ]; then
  exit 0
fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$VERSION"
"$VENV/bin/schemathesis" --version
