#!/usr/bin/env python3
"""Runs a command on a pseudo-terminal, as a person at a terminal would, and presses Enter at
every question it asks (an MCP server's elicitation: Enter answers, and keeps each field's
default). Its output goes to standard output; its exit code is this script's.
Usage: on-terminal.py COMMAND [ARG...]"""
import os
import pty
import select
import sys

pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
seen = b""
while True:
    try:
        ready, _, _ = select.select([fd], [], [], 0.5)
    except InterruptedError:
        continue
    if not ready:
        continue
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    sys.stdout.buffer.write(chunk)
    sys.stdout.flush()
    seen = (seen + chunk)[-200:]
    # A question ends with ": " and waits; the answer prompts of the agent all do.
    if seen.rstrip(b" ").endswith(b":") and seen.endswith(b": "):
        os.write(fd, b"\r")
        seen = b""
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
