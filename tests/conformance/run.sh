#!/usr/bin/env bash
# Runs the conformance suites of the official clients (openai-python, openai-node, the OpenAI Agents
# SDKs for Python and JavaScript, the Codex CLI) against a real tether-server. Needs
# TETHER_SERVER_BIN (path to the built binary).
#
#   TETHER_SERVER_BIN=target/debug/tether-server bash tests/conformance/run.sh [pytest args...]
#
# Creates/updates the venv at .venv idempotently: it reinstalls only when
# tests/conformance/requirements.txt changed (a stamp in the venv holds its hash). Installs the
# root package.json's node packages only when `openai` or `ws` is missing, and the JavaScript
# Agents SDK (tests/conformance/agents/package-lock.json) and the Codex CLI
# (tests/conformance/codex/package-lock.json) each only when its lock file changed. Both runners
# (pytest, then node --test for openai-node, the Agents SDK and the Codex CLI) always run; the exit
# code is non-zero if either failed.
#
# Against a server that is already running (a deployment: `cargo xtask deploy --test` points it
# at nginx), set TETHER_BASE_URL instead of TETHER_SERVER_BIN; TETHER_NO_WEBSOCKET_URL is a URL
# of the same deployment that refuses WebSocket upgrades (Codex's HTTP fallback), and
# TETHER_METRICS_URLS the replicas whose /metrics the checks add up. The test files then run one
# at a time, since they share the deployment's counters.
#
#   TETHER_BASE_URL=http://127.0.0.1:8080 TETHER_METRICS_URLS=http://127.0.0.1:9001,… bash tests/conformance/run.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

NODE_TEST_ARGS=()
if [[ -n "${TETHER_BASE_URL:-}" ]]; then
  echo "run.sh: against the running server at $TETHER_BASE_URL"
  NODE_TEST_ARGS=(--test-concurrency=1)
else
  if [[ -z "${TETHER_SERVER_BIN:-}" ]]; then
    echo "run.sh: TETHER_SERVER_BIN is not set (path to the tether-server binary), nor TETHER_BASE_URL" >&2
    exit 2
  fi
  if [[ ! -x "$TETHER_SERVER_BIN" ]]; then
    echo "run.sh: TETHER_SERVER_BIN=$TETHER_SERVER_BIN is not an executable file" >&2
    exit 2
  fi
  TETHER_SERVER_BIN="$(cd "$(dirname "$TETHER_SERVER_BIN")" && pwd)/$(basename "$TETHER_SERVER_BIN")"
  export TETHER_SERVER_BIN
fi

REQUIREMENTS="tests/conformance/requirements.txt"
VENV="$ROOT/.venv"
STAMP="$VENV/.conformance-requirements.sha256"
PYTHON="${PYTHON:-python3}"

want="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
have="$(cat "$STAMP" 2>/dev/null || true)"
if [[ ! -x "$VENV/bin/python" || "$want" != "$have" ]]; then
  echo "run.sh: installing $REQUIREMENTS into $VENV"
  [[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS"
  echo "$want" >"$STAMP"
fi

if [[ ! -f node_modules/openai/package.json || ! -f node_modules/ws/package.json ]]; then
  echo "run.sh: installing node packages from package-lock.json"
  npm ci --omit=optional --no-audit --no-fund
fi

# A client with a package.json of its own, (re)installed from its lock file when that changed: a
# stamp in its node_modules holds the lock file's hash, written once the client's check passes. A
# failed install fails the suite, but the other clients' tests still run (the missing client's
# tests then fail, saying what is missing).
install_locked() {
  local dir="$1"
  shift
  local stamp="$dir/node_modules/.tether-package-lock.sha256"
  local want have
  want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  have="$(cat "$stamp" 2>/dev/null || true)"
  if [[ "$want" == "$have" ]] && "$@" >/dev/null 2>&1; then
    return 0
  fi
  echo "run.sh: installing $dir from its package-lock.json"
  # npm skips an optional dependency it cannot install (the Codex CLI's platform binary) without
  # failing: the stamp is written only once the check passes.
  if npm ci --prefix "$dir" --no-audit --no-fund && "$@"; then
    echo "$want" >"$stamp"
  else
    echo "run.sh: $dir did not install" >&2
    rm -f "$stamp"
    return 1
  fi
}

status=0
# The JavaScript Agents SDK needs openai 7, where the root's openai-node tests pin 6.
install_locked tests/conformance/agents test -f tests/conformance/agents/node_modules/@openai/agents/package.json || status=1
# The Codex CLI is a 400 MB package with its binary: apart, so that the playground's setup does not
# fetch it.
install_locked tests/conformance/codex tests/conformance/codex/node_modules/.bin/codex --version || status=1

echo "== openai-python conformance"
set +e
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/conformance "$@"
py=$?
set -e
if [[ $py -eq 5 ]]; then
  echo "run.sh: pytest collected no tests" >&2
  status=1
elif [[ $py -ne 0 ]]; then
  status=1
fi

echo "== openai-node, the JavaScript Agents SDK and Codex CLI conformance"
if ! node --test --test-reporter=spec --test-timeout=120000 "${NODE_TEST_ARGS[@]}" tests/conformance/; then
  status=1
fi

exit "$status"
