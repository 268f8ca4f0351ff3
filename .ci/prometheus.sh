#!/usr/bin/env bash
# The dashboard and alert test: installs Debian's prometheus (which brings
# promtool) when it is missing, then runs examples/prometheus's test, which
# runs promtool test rules on the alerts, then scrapes the example with a
# real Prometheus, evaluates every dashboard query, and checks that the
# example's workload fires each alert (its rules scaled from minutes to
# seconds) and that its quiet phase resolves it. Under CI=true a prometheus that cannot be
# installed fails the test; elsewhere the test skips with one line.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  if command -v apt-get >/dev/null; then
    $sudo apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null || true
  fi
fi

# Every alert rule's firing and silent cases.
if command -v promtool >/dev/null; then
  (cd docs/dashboards && promtool test rules alerts_test.yml)
elif [ "${CI:-}" = true ]; then
  echo "promtool is not installed" >&2
  exit 1
fi

cd examples/prometheus
go vet ./...
go test -count=1 -timeout 3m -run TestDashboardAgainstPrometheus ./...
