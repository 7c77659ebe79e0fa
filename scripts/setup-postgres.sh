#!/usr/bin/env bash
# Installs the PostgreSQL server (Debian's postgresql package) that the PostgreSQL store's tests
# and the multi-node tests run throwaway clusters of (initdb and pg_ctl in a temporary folder).
# Idempotent: does nothing when a server is installed. PG_BIN names another installation.
set -euo pipefail

if [ -n "${PG_BIN:-}" ] && [ -x "$PG_BIN/initdb" ]; then
  exit 0
fi
for bin in /usr/lib/postgresql/*/bin; do
  if [ -x "$bin/initdb" ] && [ -x "$bin/pg_ctl" ]; then
    exit 0
  fi
done

if ! command -v apt-get > /dev/null; then
  echo "setup-postgres: install the PostgreSQL server (initdb, pg_ctl) and set PG_BIN to its bin folder" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != "0" ]; then
  sudo="sudo"
fi
echo "setup-postgres: installing Debian's postgresql package" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends postgresql > /dev/null
