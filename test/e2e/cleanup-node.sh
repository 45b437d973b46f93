#!/usr/bin/env bash
# Tears down what test/support/e2e-node.ts started under DIR, idempotently, so it can run
# from the harness's stop() and from a process exit hook (test failure, SIGINT):
#   test/e2e/cleanup-node.sh DIR [--strays]
# --strays (the exit hook's): first SIGKILL every other process whose command line names a
# path under DIR (our driver and file provider, children of a test process that is exiting).
# Order: kubelet; every containerd task and container (pods' processes); containerd;
# leftover shims and processes in the node's cgroups; mounts under DIR; the cgroups
# kubelet and containerd made under the node's cgroup root; kubelet's files in fixed host
# paths; the sysctls kubelet changed.
# Reads DIR/kubelet.pid, DIR/containerd.pid, DIR/containerd/containerd.sock,
# DIR/cgroup-root (a name such as /ssc-e2e-1a2b3c), DIR/sysctls.saved (key=value lines).
set -uo pipefail
DIR="${1:?usage: cleanup-node.sh DIR}"
[ -d "$DIR" ] || exit 0
SOCK="$DIR/containerd/containerd.sock"

alive() { kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != Z ]; }
stop_pid() { # stop_pid PIDFILE GRACE_TENTHS
  local pid
  [ -f "$1" ] || return 0
  pid="$(cat "$1")"
  if [ -n "$pid" ] && alive "$pid"; then
    kill "$pid" 2>/dev/null
    for _ in $(seq "$2"); do alive "$pid" || break; sleep 0.1; done
    alive "$pid" && kill -9 "$pid" 2>/dev/null
  fi
  rm -f "$1"
}

if [ "${2:-}" = --strays ]; then
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = "$$" ] && continue
    if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$DIR/"; then kill -9 "${p#/proc/}" 2>/dev/null; fi
  done
fi

stop_pid "$DIR/kubelet.pid" 100

if [ -S "$SOCK" ] && [ -f "$DIR/containerd.pid" ] && alive "$(cat "$DIR/containerd.pid")"; then
  ctr() { command ctr --address "$SOCK" --namespace k8s.io --timeout 10s "$@"; }
  for t in $(ctr tasks ls -q 2>/dev/null); do ctr tasks kill --signal SIGKILL "$t" >/dev/null 2>&1; done
  for t in $(ctr tasks ls -q 2>/dev/null); do
    for _ in $(seq 50); do ctr tasks delete "$t" >/dev/null 2>&1 && break; sleep 0.1; done
  done
  for c in $(ctr containers ls -q 2>/dev/null); do ctr containers delete "$c" >/dev/null 2>&1; done
fi
stop_pid "$DIR/containerd.pid" 100

# Shims of this containerd (started with -address SOCK) and anything left in our cgroups.
for p in /proc/[0-9]*; do
  if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "-address $SOCK "; then kill -9 "${p#/proc/}" 2>/dev/null; fi
done
ROOT=""
[ -f "$DIR/cgroup-root" ] && ROOT="$(cat "$DIR/cgroup-root")"
if [ -n "$ROOT" ] && [ "$ROOT" != / ]; then
  for h in /sys/fs/cgroup/*/; do
    [ -d "$h${ROOT#/}" ] || continue
    find "$h${ROOT#/}" -name cgroup.procs -exec cat {} + 2>/dev/null | while read -r pid; do kill -9 "$pid" 2>/dev/null; done
  done
fi

# Mounts under DIR (container rootfs, tmpfs volumes, shm), deepest first, a few passes.
for _ in 1 2 3 4 5; do
  mapfile -t mps < <(awk -v d="$DIR" '{ p = $5; gsub(/\\040/, " ", p); if (p == d || index(p, d "/") == 1) print p }' /proc/self/mountinfo | sort -r)
  [ "${#mps[@]}" -gt 0 ] || break
  for m in "${mps[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
done

# Cgroups under the node's root, deepest first (a cgroup is removable once empty).
if [ -n "$ROOT" ] && [ "$ROOT" != / ]; then
  for _ in $(seq 50); do
    left=0
    for h in /sys/fs/cgroup/*/; do
      [ -d "$h${ROOT#/}" ] || continue
      find "$h${ROOT#/}" -depth -type d -exec rmdir {} \; 2>/dev/null
      [ -d "$h${ROOT#/}" ] && left=1
    done
    [ "$left" -eq 0 ] && break
    sleep 0.1
  done
fi

# kubelet's fixed host paths: its pod-log symlinks into DIR, its device-plugin socket
# (only one kubelet runs here), and their directories when empty.
for l in /var/log/containers/*.log; do
  [ -L "$l" ] && case "$(readlink "$l")" in "$DIR"/*) rm -f "$l" ;; esac
done
rm -f /var/lib/kubelet/device-plugins/kubelet.sock
rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet /var/log/containers 2>/dev/null

if [ -f "$DIR/sysctls.saved" ]; then
  while IFS='=' read -r key value; do
    [ -n "$key" ] && sysctl -q -w "$key=$value" >/dev/null 2>&1
  done <"$DIR/sysctls.saved"
  rm -f "$DIR/sysctls.saved"
fi
exit 0
