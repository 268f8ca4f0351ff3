#!/usr/bin/env bash
# Checks docs/dashboards/headroom.json against Grafana's own dashboard
# schema: the @grafana/schema package's Dashboard type, with TypeScript's
# compiler. The JSON is written into a TypeScript file as a typed literal,
# so that every field is checked against the schema's types.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --silent --no-audit --no-fund @grafana/schema@13.2.3 typescript@5 >/dev/null
{
  echo "import type { Dashboard } from '@grafana/schema';"
  printf 'export const dashboard: Dashboard = '
  cat "$root/docs/dashboards/headroom.json"
  echo ';'
} > check.ts
npx tsc --noEmit --strict --skipLibCheck --moduleResolution node --target es2020 check.ts
echo "docs/dashboards/headroom.json matches @grafana/schema's Dashboard"
