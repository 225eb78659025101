#!/usr/bin/env bash
# One command from a fresh clone to a running server: installs what is missing, builds
# (Release) and starts keywarden-server in the foreground on 127.0.0.1:6379.
# Extra arguments go to the server, as redis-server takes them: scripts/run-server.sh --port 7000
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release keywarden-server
exec build/src/server/keywarden-server "$@"
