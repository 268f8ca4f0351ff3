#!/usr/bin/env bash
# Installs what the page's browser test (TestPageInChromium in cmd/headroom-sim)
# needs beyond Go: Debian's chromium and a font, when no Chromium is on PATH.
# It prints what it found or installed. Under CI=true a Chromium that cannot be
# installed makes the test fail, saying why; elsewhere the test skips.
set -euo pipefail

for browser in chromium chromium-browser google-chrome google-chrome-stable; do
  if command -v "$browser" >/dev/null; then
    echo "chromium.sh: found $(command -v "$browser")"
    exit 0
  fi
done
if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo -n"; fi
if command -v apt-get >/dev/null; then
  $sudo apt-get update -qq >/dev/null 2>&1 || true
  if DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null; then
    echo "chromium.sh: installed $(command -v chromium)"
    exit 0
  fi
fi
echo "chromium.sh: could not install Debian's chromium; the browser test will say so" >&2
