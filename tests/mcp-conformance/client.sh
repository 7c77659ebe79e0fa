#!/usr/bin/env bash
# The agent's MCP client as the conformance suite drives a client: `client.sh <server URL>`
# with the scenario in MCP_CONFORMANCE_SCENARIO. A folder whose agent.toml names the server,
# then `agent mcp list` (connect, initialize, list the tools) and a scripted run that calls
# every tool the server lists (add_numbers with numbers, the others without arguments).
set -uo pipefail
agent="${AGENT_BIN:?AGENT_BIN names the agent binary}"
url="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir"
printf '[mcp.servers.conformance]\nurl = "%s"\ntimeout_secs = 10\n' "$url" > agent.toml
export AGENT_TRACE_DIR="$dir/traces" HOME="$dir" XDG_CONFIG_HOME="$dir"
listed="$("$agent" mcp list --json)" || exit 1
python3 - "$listed" > script.json <<'PY'
import json, sys
servers = json.loads(sys.argv[1])["servers"]
calls = []
for server in servers:
    for tool in server.get("tools", []):
        name = tool["name"]
        args = {"a": 2, "b": 3} if name.endswith("add_numbers") else {}
        calls.append({"tool_calls": [{"name": name, "arguments": args}]})
calls.append({"text": "done"})
print(json.dumps(calls))
PY
"$agent" run --script script.json --yes --workspace "$dir" "Call the server's tools"
