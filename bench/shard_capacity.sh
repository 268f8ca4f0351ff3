#!/usr/bin/env bash
# What one Redis server sustains for fleet's scripts on one key (one shard), measured with
# redis-benchmark (a C client, so that the client costs the machine as little as can be) at
# 1 to 64 connections: EVALSHA of the token bucket's script (a limit that never refuses) and of
# the sliding window's (a window of 8 segments that never fills). It starts a redis-server of its
# own on a free loopback port, and stops exactly it. docs/fleet.md's model takes these figures.
#
#   bench/shard_capacity.sh [requests per run, default 200000]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200000}
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --logfile "$dir/log" &
pid=$!
trap 'kill "$pid"; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
HEADROOM_FLEET_SCRIPTS=$dir go test -count=1 -run TestWriteScripts ./fleet/ >/dev/null
gcra=$(redis-cli -p "$port" script load "$(cat "$dir/gcra.lua")")
window=$(redis-cli -p "$port" script load "$(cat "$dir/window.lua")")
echo "script,connections,commands_per_second"
for c in 1 2 4 8 16 32 64; do
  # the bucket: 1 µs interval, a burst of 10^9, need 1, want 1
  rps=$(redis-benchmark -p "$port" -c "$c" -n "$n" -q --csv evalsha "$gcra" 1 "{bench:onekey}:bucket" 1 1000000000 1 1 |
    tail -1 | cut -d, -f2 | tr -d '"')
  echo "gcra,$c,$rps"
  # the window: 1 s in 8 segments of 125 ms, a limit of 10^9, need 1, want 1
  rps=$(redis-benchmark -p "$port" -c "$c" -n "$n" -q --csv evalsha "$window" 1 "{bench:onekey}:window" 1000000 125000 1000000000 1 1 |
    tail -1 | cut -d, -f2 | tr -d '"')
  echo "window,$c,$rps"
done
