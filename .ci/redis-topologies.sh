#!/usr/bin/env bash
# Starts and stops the Redis topologies that fleet's Cluster and Sentinel tests need, on loopback,
# from Debian's redis-server, each node a process of its own on a port of its own:
#   - a Cluster of three masters and three replicas (cluster-enabled, redis-cli --cluster create);
#   - a master and a replica behind three Sentinels (master name "headroom").
# It never touches a server it did not start (the machine's own on 6379 included).
#
#   .ci/redis-topologies.sh start DIR   start both in DIR, wait until they are healthy, and write
#                                       DIR/env: HEADROOM_REDIS_TOPOLOGY, HEADROOM_REDIS_CLUSTER
#                                       and HEADROOM_REDIS_SENTINEL, for `source`
#   .ci/redis-topologies.sh stop DIR    kill exactly the processes it started there (each node's
#                                       pidfile, which a node a test restarted from its
#                                       redis.conf rewrites), and remove DIR
#
# Each node keeps its redis.conf and pidfile in DIR/<port>/; a test kills a node by its pidfile
# and restarts it with `redis-server DIR/<port>/redis.conf`. Nodes keep nothing on disk but the
# Cluster's nodes.conf and the Sentinels' own configuration.
set -euo pipefail

die() { echo "redis-topologies: $*" >&2; exit 1; }

install_redis() {
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null && return
  echo "redis-topologies: installing redis-server and redis-tools" >&2
  apt-get update -qq && apt-get install -y -qq redis-server redis-tools >/dev/null
}

# in_use PORT: something listens on 127.0.0.1:PORT.
in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pick_base: a port P such that P..P+10 and their Cluster bus ports (+10000) are free. Ports
# 21000-22989 keep the bus ports (31000-32999) below Linux's ephemeral range (32768 and up)
# for the most part; a collision is checked anyway.
pick_base() {
  local base p ok
  for _ in $(seq 50); do
    base=$((21000 + (RANDOM % 199) * 10))
    ok=1
    for p in $(seq "$base" $((base + 10))); do
      if in_use "$p" || in_use $((p + 10000)); then ok=0; break; fi
    done
    [ "$ok" = 1 ] && { echo "$base"; return; }
  done
  die "no free ports found"
}

# node_conf DIR PORT EXTRA...: a node's redis.conf.
node_conf() {
  local dir=$1 port=$2; shift 2
  mkdir -p "$dir/$port"
  {
    echo "port $port"
    echo "bind 127.0.0.1"
    echo "dir $dir/$port"
    echo "daemonize yes"
    echo "pidfile $dir/$port/pid"
    echo "logfile $dir/$port/log"
    echo 'save ""'
    echo "appendonly no"
    printf '%s\n' "$@"
  } >"$dir/$port/redis.conf"
}

# wait_for CMD...: CMD succeeds within 30 s.
wait_for() {
  for _ in $(seq 300); do "$@" >/dev/null 2>&1 && return; sleep 0.1; done
  die "timed out waiting for: $*"
}

answers() { [ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ]; }

# cluster_healthy PORT...: every node says the cluster is ok and sees 3 masters, each with a
# replica whose link is up.
cluster_healthy() {
  local p
  for p in "$@"; do
    redis-cli -p "$p" cluster info | grep -q '^cluster_state:ok' || return 1
  done
  [ "$(redis-cli -p "$1" cluster nodes | grep -c 'master' )" -ge 3 ] || return 1
  for p in "$@"; do
    if redis-cli -p "$p" role | head -1 | grep -q slave; then
      redis-cli -p "$p" info replication | grep -q 'master_link_status:up' || return 1
    fi
  done
}

sentinels_see() {
  local s
  for s in "$@"; do
    redis-cli -p "$s" sentinel replicas headroom 2>/dev/null | grep -q . || return 1
    [ "$(redis-cli -p "$s" sentinel master headroom | sed -n '/^num-other-sentinels$/{n;p}')" = 2 ] || return 1
  done
}

start() {
  local dir=$1
  [ -e "$dir/env" ] && die "$dir already holds a topology; stop it first"
  install_redis
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  local base; base=$(pick_base)
  local cluster=() p
  for p in $(seq "$base" $((base + 5))); do
    node_conf "$dir" "$p" "cluster-enabled yes" "cluster-config-file nodes.conf" \
      "cluster-node-timeout 1000" "cluster-replica-validity-factor 0" \
      "cluster-require-full-coverage no" "cluster-allow-reads-when-down no"
    redis-server "$dir/$p/redis.conf"
    cluster+=("$p")
  done
  for p in "${cluster[@]}"; do wait_for answers "$p"; done
  local addrs=()
  for p in "${cluster[@]}"; do addrs+=("127.0.0.1:$p"); done
  redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes >"$dir/cluster-create.log"
  wait_for cluster_healthy "${cluster[@]}"

  local master=$((base + 6)) replica=$((base + 7)) sentinels=()
  node_conf "$dir" "$master"
  node_conf "$dir" "$replica" "replicaof 127.0.0.1 $master"
  redis-server "$dir/$master/redis.conf"
  redis-server "$dir/$replica/redis.conf"
  wait_for answers "$master"
  wait_for answers "$replica"
  for p in $(seq $((base + 8)) $((base + 10))); do
    node_conf "$dir" "$p" "sentinel monitor headroom 127.0.0.1 $master 2" \
      "sentinel down-after-milliseconds headroom 1000" "sentinel failover-timeout headroom 5000" \
      "sentinel parallel-syncs headroom 1"
    sed -i '/^save\|^appendonly/d' "$dir/$p/redis.conf"
    redis-server "$dir/$p/redis.conf" --sentinel
    sentinels+=("$p")
  done
  wait_for sentinels_see "${sentinels[@]}"

  local sent=()
  for p in "${sentinels[@]}"; do sent+=("127.0.0.1:$p"); done
  {
    echo "export HEADROOM_REDIS_TOPOLOGY=$dir"
    echo "export HEADROOM_REDIS_CLUSTER=$(IFS=,; echo "${addrs[*]}")"
    echo "export HEADROOM_REDIS_SENTINEL=headroom@$(IFS=,; echo "${sent[*]}")"
  } >"$dir/env"
  echo "redis-topologies: Cluster on ${cluster[0]}-${cluster[5]}, Sentinel master $master, replica $replica, sentinels ${sentinels[*]} (in $dir)" >&2
}

# ours PID PORT: PID is a redis-server this script started for PORT (a pidfile may be stale, and
# its pid reused by another process).
ours() {
  [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q "redis-server.*:$2\b\|redis-sentinel.*:$2\b"
}

stop() {
  local dir=$1 pidfile port pid pids=()
  [ -d "$dir" ] || return 0
  for pidfile in "$dir"/*/pid; do
    [ -e "$pidfile" ] || continue
    port=$(basename "$(dirname "$pidfile")")
    pid=$(cat "$pidfile")
    if ours "$pid" "$port"; then
      kill -9 "$pid"
      pids+=("$pid")
    fi
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do [ -e "/proc/$pid" ] || break; sleep 0.05; done
  done
  rm -rf "$dir"
}

case "${1:-}" in
  start) [ -n "${2:-}" ] || die "usage: $0 start DIR"; start "$2" ;;
  stop) [ -n "${2:-}" ] || die "usage: $0 stop DIR"; stop "$2" ;;
  *) die "usage: $0 start|stop DIR" ;;
esac
