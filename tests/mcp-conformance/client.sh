#!/usr/bin/env bash
# The agent's MCP client as the conformance suite drives a client: `client.sh <server URL>`
# with the scenario in MCP_CONFORMANCE_SCENARIO (and a pre-registered OAuth client, when the
# scenario has one, in MCP_CONFORMANCE_CONTEXT: a secret, a private key for the client
# credentials grant, or an identity provider's ID token for cross-app access). A folder whose agent.toml names the server,
# then what a person would do: `agent mcp list` (connect, initialize, list the tools); when it
# says the server needs sign-in, `agent mcp login` (the "browser" follows the sign-in page's
# redirects back to the agent) and the list again; then a scripted run on a terminal that calls
# every tool the server lists (add_numbers with numbers, the others without arguments), where
# the person presses Enter at each question a server asks (keeping the defaults it offers).
set -uo pipefail
agent="${AGENT_BIN:?AGENT_BIN names the agent binary}"
here="$(cd "$(dirname "$0")" && pwd)"
url="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir"
python3 - "$url" "${MCP_CONFORMANCE_CONTEXT:-}" > agent.toml <<'PY'
import json, os, sys
url, context = sys.argv[1], json.loads(sys.argv[2] or "{}")
print('[mcp.servers.conformance]\nurl = %s\ntimeout_secs = 10' % json.dumps(url))
scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
# The client credentials scenarios hand the client its credentials: a secret, or a private key
# that signs a JWT assertion (kept in a file of its own, as a person would keep one).
grant = 'grant = "client_credentials"\n' if scenario.startswith("auth/client-credentials") else ""
def secret_file(name, text):
    path = os.path.abspath(name)
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
        out.write(text)
    return json.dumps(path)
# Cross-app access hands over the person's ID token from the company's identity provider.
if "idp_id_token" in context:
    grant = 'grant = "cross_app_access"\nidp_token_endpoint = %s\nidp_client_id = %s\nid_token_file = %s\n' % (
        json.dumps(context["idp_token_endpoint"]), json.dumps(context["idp_client_id"]),
        secret_file("id-token", context["idp_id_token"]))
if "client_id" in context and "client_secret" in context:
    print('[mcp.servers.conformance.oauth]\n%sclient_id = %s\nclient_secret = %s'
          % (grant, json.dumps(context["client_id"]), json.dumps(context["client_secret"])))
elif "client_id" in context and "private_key_pem" in context:
    path = secret_file("client-key.pem", context["private_key_pem"])
    print('[mcp.servers.conformance.oauth]\n%sclient_id = %s\nprivate_key_file = %s'
          '\nsigning_algorithm = %s' % (grant, json.dumps(context["client_id"]), path,
                                         json.dumps(context.get("signing_algorithm", "ES256"))))
PY
export AGENT_TRACE_DIR="$dir/traces" HOME="$dir" XDG_CONFIG_HOME="$dir"
export BROWSER="curl --silent --show-error --location --output /dev/null"
if ! listed="$("$agent" mcp list --json)"; then
  grep -q "agent mcp login" <<<"$listed" || exit 1
  "$agent" mcp login conformance || exit 1
  listed="$("$agent" mcp list --json)" || exit 1
fi
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
"$here/on-terminal.py" "$agent" run --script script.json --yes --workspace "$dir" "Call the server's tools"
