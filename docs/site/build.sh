#!/usr/bin/env bash
# Builds the interactive simulator page for any static host: the page's files,
# the simulator compiled to WebAssembly (sim.wasm, headroom's own engines) and
# Go's loader for it (wasm_exec.js), into the folder given, or into docs/site
# itself (where git ignores what the build adds). Serve the folder's files as
# they are; a host should send sim.wasm as application/wasm, and compressed if
# it can (about 2.2 MB gzip-compressed for 7.9 MB). To build and serve it on this
# machine instead: go run ./cmd/headroom-sim -serve 127.0.0.1:8080
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")}")
cd "$(dirname "$0")/../.."
exec go run ./cmd/headroom-sim -build-site "$out"
