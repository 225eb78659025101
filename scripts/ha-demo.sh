#!/usr/bin/env bash
# A high-availability demo on one machine: one primary, two replicas and three stock
# redis-sentinel processes monitoring them as "mymaster" (docs/replication.md walks through it).
#
#   scripts/ha-demo.sh start     start everything (in $HA_DIR), print how to connect
#   scripts/ha-demo.sh status    ROLE of each node and what each sentinel calls the primary
#   scripts/ha-demo.sh kill N    kill -9 data node N (0 = the first primary, 1, 2)
#   scripts/ha-demo.sh revive N  start data node N again from its (possibly rewritten) config
#   scripts/ha-demo.sh stop      stop everything started by `start` and remove $HA_DIR
#
# Environment (defaults in brackets):
#   HA_SERVER         the data node binary [build/src/server/keywarden-server]; any
#                     redis-server works too, e.g. HA_SERVER=/usr/bin/redis-server
#   HA_SENTINEL       the sentinel binary [redis-sentinel from PATH]
#   HA_DIR            where configs, data, logs and pid files go [/tmp/keywarden-ha]
#   HA_PORT           the primary's port; the replicas take the next two [7000]
#   HA_SENTINEL_PORT  the first sentinel's port; the others take the next two [26379]
#
# Everything listens on 127.0.0.1 only. Nodes and sentinels run in the foreground of a
# background shell job (no daemonize), so their pids are known and `stop` ends exactly them.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
server="${HA_SERVER:-$repo/build/src/server/keywarden-server}"
sentinel="${HA_SENTINEL:-$(command -v redis-sentinel || echo /usr/bin/redis-sentinel)}"
dir="${HA_DIR:-/tmp/keywarden-ha}"
port="${HA_PORT:-7000}"
sentinel_port="${HA_SENTINEL_PORT:-26379}"
node_ports=("$port" "$((port + 1))" "$((port + 2))")
sentinel_ports=("$sentinel_port" "$((sentinel_port + 1))" "$((sentinel_port + 2))")

die() { echo "ha-demo: $*" >&2; exit 1; }

# Waits until 127.0.0.1:$1 (process $2) answers PING (up to 10 s); else stops everything.
wait_ping() {
  for _ in $(seq 100); do
    if redis-cli -p "$1" PING 2>/dev/null | grep -q PONG; then return 0; fi
    sleep 0.1
  done
  echo "ha-demo: nothing answers on port $1; its log:" >&2
  tail -5 "$dir/$2.log" >&2 || true
  stop >&2
  exit 1
}

# Starts "$@" in the background with output to $dir/$name.log and its pid in $dir/$name.pid.
launch() {
  local name=$1; shift
  (cd "$dir/$name" && exec "$@" >"$dir/$name.log" 2>&1) &
  echo $! >"$dir/$name.pid"
}

start() {
  [[ -x $server ]] || die "$server is not an executable (build it: scripts/build.sh release)"
  [[ -x $sentinel ]] || die "$sentinel not found (sudo apt-get install redis-sentinel)"
  [[ -e $dir ]] && die "$dir exists: run '$0 stop' first (or set HA_DIR)"
  for p in "${node_ports[@]}" "${sentinel_ports[@]}"; do
    if redis-cli -p "$p" PING >/dev/null 2>&1; then die "port $p is already in use"; fi
  done
  mkdir -p "$dir"

  local i
  for i in 0 1 2; do
    local name="node$i" p=${node_ports[$i]}
    mkdir -p "$dir/$name"
    {
      echo "port $p"
      echo "bind 127.0.0.1"
      echo "dir \"$dir/$name\""
      echo "dbfilename dump.rdb"
      echo "save \"\""
      echo "appendonly no"
      echo "repl-diskless-sync yes"
      echo "repl-diskless-sync-delay 0"
      # Sentinel reconfigures nodes with SLAVEOF + CONFIG REWRITE into this file.
      if [[ $i -gt 0 ]]; then echo "replicaof 127.0.0.1 ${node_ports[0]}"; fi
    } >"$dir/$name/node.conf"
    launch "$name" "$server" "$dir/$name/node.conf"
    wait_ping "$p" "$name"
  done

  for i in 0 1 2; do
    local name="sentinel$i" p=${sentinel_ports[$i]}
    mkdir -p "$dir/$name"
    cat >"$dir/$name/sentinel.conf" <<EOF
port $p
bind 127.0.0.1
dir "$dir/$name"
sentinel resolve-hostnames no
sentinel monitor mymaster 127.0.0.1 ${node_ports[0]} 2
sentinel down-after-milliseconds mymaster 2000
sentinel failover-timeout mymaster 10000
sentinel parallel-syncs mymaster 1
EOF
    launch "$name" "$sentinel" "$dir/$name/sentinel.conf"
    wait_ping "$p" "$name"
  done

  cat <<EOF
Started in $dir ($(basename "$server")):
  primary   127.0.0.1:${node_ports[0]}      redis-cli -p ${node_ports[0]} INFO replication
  replicas  127.0.0.1:${node_ports[1]}, 127.0.0.1:${node_ports[2]}
  sentinels 127.0.0.1:${sentinel_ports[0]}, :${sentinel_ports[1]}, :${sentinel_ports[2]}   (master name: mymaster)

  redis-cli -p ${sentinel_ports[0]} SENTINEL get-master-addr-by-name mymaster
  redis-cli -p ${sentinel_ports[0]} SENTINEL replicas mymaster
  python3 -c "from redis.sentinel import Sentinel; s = Sentinel([('127.0.0.1', ${sentinel_ports[0]})]); print(s.discover_master('mymaster'), s.discover_slaves('mymaster'))"

Try a failover: $0 kill 0 (later: $0 revive 0), or redis-cli -p ${sentinel_ports[0]} SENTINEL FAILOVER mymaster.
Watch it: $0 status; tail -f $dir/sentinel0.log. Stop everything: $0 stop
EOF
}

status() {
  [[ -d $dir ]] || die "$dir does not exist: nothing started"
  local i
  for i in 0 1 2; do
    echo "node$i 127.0.0.1:${node_ports[$i]} ROLE: $(redis-cli -p "${node_ports[$i]}" ROLE 2>&1 | tr '\n' ' ')"
  done
  for i in 0 1 2; do
    echo "sentinel$i :${sentinel_ports[$i]} primary: $(redis-cli -p "${sentinel_ports[$i]}" SENTINEL get-master-addr-by-name mymaster 2>&1 | tr '\n' ' ')"
  done
}

node_index() {
  [[ ${1:-} =~ ^[012]$ ]] || die "name a data node: 0, 1 or 2"
}

kill_node() {
  node_index "${1:-}"
  local pid
  pid=$(cat "$dir/node$1.pid" 2>/dev/null) || die "node$1 was not started"
  kill -9 "$pid" 2>/dev/null && echo "killed node$1 (pid $pid, port ${node_ports[$1]})" ||
    echo "node$1 was not running"
}

revive_node() {
  node_index "${1:-}"
  local pid
  pid=$(cat "$dir/node$1.pid" 2>/dev/null) || die "node$1 was not started"
  if kill -0 "$pid" 2>/dev/null; then die "node$1 is running (pid $pid)"; fi
  launch "node$1" "$server" "$dir/node$1/node.conf"
  wait_ping "${node_ports[$1]}" "node$1"
  echo "node$1 is back on port ${node_ports[$1]}; its config says:"
  grep -E '^(replicaof|slaveof)' "$dir/node$1/node.conf" || echo "  (no replicaof: it starts as a primary)"
}

stop() {
  [[ -d $dir ]] || { echo "ha-demo: $dir does not exist: nothing to stop"; return 0; }
  local pidfile pid
  for pidfile in "$dir"/sentinel*.pid "$dir"/node*.pid; do
    [[ -e $pidfile ]] || continue
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
      kill -CONT "$pid" 2>/dev/null || true  # in case the demo paused it
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$dir"
  echo "stopped; removed $dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  kill) kill_node "${2:-}" ;;
  revive) revive_node "${2:-}" ;;
  *) echo "usage: $0 start|status|kill N|revive N|stop   (see the header of this script for the environment)" >&2
     exit 2 ;;
esac
