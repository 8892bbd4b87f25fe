#!/usr/bin/env bash
# The system packages the test suite needs beside Python's: PostgreSQL (the integration tests start
# throwaway clusters with its binaries), Graphviz's dot (the notebooks' drawing), Chromium (the
# chat page and /docs in a browser) and Node.js with npm (Agent Chat UI, installed from the npm
# registry by its test). Installs whichever is missing with apt-get; does nothing when
# all are there. `make test` and .ci/run both call it.
set -euo pipefail

missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v dot >/dev/null || missing+=(graphviz)
command -v chromium >/dev/null || missing+=(chromium)
command -v npx >/dev/null || missing+=(nodejs npm)
((${#missing[@]})) || exit 0

sudo=()
if ((EUID != 0)); then
    command -v sudo >/dev/null || {
        echo "the tests need: ${missing[*]}; install them with apt-get (as root)" >&2
        exit 1
    }
    sudo=(sudo)
fi
echo "installing ${missing[*]} (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
