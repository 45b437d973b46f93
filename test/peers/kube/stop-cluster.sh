#!/usr/bin/env bash
# Stops what test/peers/kube/start-cluster.sh DIR started: kube-apiserver first,
# then etcd, by the pids in DIR/*.pid (SIGTERM, SIGKILL after 10 s). A pid whose
# process is not the expected program (exited, pid reused) is left alone.
# DIR itself is kept (logs); remove it yourself.
#
#   test/peers/kube/stop-cluster.sh DIR
set -euo pipefail

if [ "$#" -ne 1 ] || [ ! -d "$1" ]; then echo "usage: $0 DIR" >&2; exit 2; fi
DIR="$1"

for name in kube-apiserver etcd; do
  pidfile="$DIR/$name.pid"
  [ -f "$pidfile" ] || continue
  pid="$(cat "$pidfile")"
  # Only signal the program we started (its argv[0] ends in the binary's name).
  if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null \
     && [ "$(basename "$(ps -o args= -p "$pid" | awk '{print $1}')")" = "$name" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "stop-cluster: $name ($pid) ignored SIGTERM for 10 s; sending SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$pidfile"
done
