#!/usr/bin/env bash
# Installs the OTLP receiver the agent-cli OpenTelemetry test sends spans to (Arize Phoenix,
# pinned by tests/otel/requirements.txt) into the virtual environment tests/otel/.venv.
# Idempotent: does nothing when the environment was installed from the current requirements.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/tests/otel"

python="$(command -v python3 || true)"
if [ -z "$python" ]; then
  echo "setup-otel: Python 3 is needed for the OpenTelemetry test and is not installed" >&2
  exit 1
fi

# A copy of the requirements the environment was installed from; stale when they differ.
stamp="$dir/.venv/.installed-requirements.txt"
if [ ! -f "$stamp" ] || ! cmp -s "$dir/requirements.txt" "$stamp"; then
  echo "setup-otel: installing the OTLP receiver into tests/otel/.venv" >&2
  rm -rf "$dir/.venv"
  "$python" -m venv "$dir/.venv"
  "$dir/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$dir/requirements.txt"
  cp "$dir/requirements.txt" "$stamp"
fi
