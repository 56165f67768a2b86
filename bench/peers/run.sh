#!/usr/bin/env bash
# `pnpm bench:peers`: installs bench/peers from its own lockfile when needed (npm, not the pnpm workspace:
# these packages never reach Switchboard's dependency tree), then runs the comparison from the repository root.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --ignore-scripts
fi
cd ../..
exec node_modules/.bin/tsx bench/peers/src/main.ts
