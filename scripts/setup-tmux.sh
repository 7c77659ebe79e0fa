#!/usr/bin/env bash
# Installs tmux, the terminal multiplexer whose panes the full-screen UI's tests read the
# scrollback of (what stays in the terminal once the UI has left its screen).
# Idempotent: does nothing when tmux is on the PATH.
set -euo pipefail

if command -v tmux > /dev/null; then
  exit 0
fi
if ! command -v apt-get > /dev/null; then
  echo "setup-tmux: install tmux (the full-screen UI's tests run it)" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != "0" ]; then
  sudo="sudo"
fi
echo "setup-tmux: installing Debian's tmux package" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends tmux > /dev/null
