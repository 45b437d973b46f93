#!/usr/bin/env bash
# Starts a throwaway Kubernetes control plane on loopback: etcd plus
# kube-apiserver (no controller-manager, scheduler or kubelet), both detached,
# state and logs in DIR.
#
#   test/peers/kube/start-cluster.sh DIR
#
# DIR is created if missing and should be empty (a fresh temp dir per run). When
# it is ready, prints (and writes to DIR/cluster.env):
#   KUBE_URL=https://127.0.0.1:<port>   ADMIN_TOKEN=<system:masters token>
#   CA_FILE=DIR/pki/ca.crt              KUBECONFIG=DIR/kubeconfig
#   ETCD_URL=http://127.0.0.1:<port>    SA_ISSUER=  SA_SIGNING_KEY=  SA_PUBLIC_KEY=
#   AUDIT_LOG=DIR/audit.log  (JSON lines, Metadata level, requests of service accounts
#                             only: which API calls a driver identity made)
# Client certificates signed by DIR/pki/ca.crt (key: DIR/pki/ca.key) are accepted too
# (CN = user, O = group).
# Stop it with test/peers/kube/stop-cluster.sh DIR.
# Extra static tokens (e.g. one for the driver, bound by your own RBAC): put lines
# `token,user,uid,"group1,group2"` in DIR/extra-tokens.csv before starting.
# Binaries: $ETCD and $KUBE_APISERVER, else peers.env from test/peers/install.sh
# (install.sh etcd kube-apiserver). Needs openssl, curl, and node or python3.
# START_CLUSTER_TIMEOUT (seconds, default 90) bounds each readiness wait.
# KUBE_APISERVER_PROFILING=true serves /debug/pprof (admin only; the cluster benchmark
# asks for a garbage collection there before reading the apiserver's Go memory).
# Exit status: 0 ready, 1 failed (both processes stopped, log tails on stderr), 2 usage.
# (end of usage)
set -euo pipefail

usage() { sed -n '5,/^# (end of usage)$/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  ''|-*) usage >&2; exit 2 ;;
esac
[ "$#" -eq 1 ] || { usage >&2; exit 2; }

mkdir -p "$1"
DIR="$(cd "$1" && pwd)"
TIMEOUT="${START_CLUSTER_TIMEOUT:-90}"

die() { echo "start-cluster: $*" >&2; exit 1; }

if [ -z "${ETCD:-}" ] || [ -z "${KUBE_APISERVER:-}" ]; then
  env_file="${SSC_PEERS_CACHE:-$HOME/.cache/secrets-store-csi/peers}/peers.env"
  if [ -f "$env_file" ]; then
    while IFS='=' read -r key value; do
      case "$key" in
        ETCD) ETCD="${ETCD:-$value}" ;;
        KUBE_APISERVER) KUBE_APISERVER="${KUBE_APISERVER:-$value}" ;;
      esac
    done <"$env_file"
  fi
fi
[ -x "${ETCD:-}" ] || die "no etcd binary (set ETCD or run test/peers/install.sh etcd)"
[ -x "${KUBE_APISERVER:-}" ] || die "no kube-apiserver binary (set KUBE_APISERVER or run test/peers/install.sh kube-apiserver)"
for tool in openssl curl; do command -v "$tool" >/dev/null 2>&1 || die "$tool is not on PATH"; done
for f in etcd.pid kube-apiserver.pid; do
  if [ -f "$DIR/$f" ] && kill -0 "$(cat "$DIR/$f")" 2>/dev/null; then die "$DIR/$f: already running"; fi
done

# free_ports N: N distinct TCP ports that were free on 127.0.0.1 a moment ago.
free_ports() {
  if command -v node >/dev/null 2>&1; then
    node -e '
      const net = require("net"); const n = +process.argv[1]; const socks = []; const ports = [];
      const next = () => { if (ports.length === n) { socks.forEach((s) => s.close()); console.log(ports.join(" ")); return; }
        const s = net.createServer(); socks.push(s);
        s.listen(0, "127.0.0.1", () => { ports.push(s.address().port); next(); }); };
      next();' "$1"
  elif command -v python3 >/dev/null 2>&1; then
    python3 -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
  else
    die "need node or python3 to find free ports"
  fi
}

# --- credentials (once per DIR) ----------------------------------------------------
PKI="$DIR/pki"
mkdir -p "$PKI"
if [ ! -f "$PKI/apiserver.crt" ]; then
  (
    cd "$PKI"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
      -keyout ca.key -out ca.crt -subj "/CN=ssc-test-cluster-ca" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver"
    printf '%s\n' \
      "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" \
      "subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
      >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -set_serial "0x$(openssl rand -hex 8)" \
      -days 30 -extfile apiserver.ext -out apiserver.crt
    # Service-account token signing key (RS256).
    openssl genrsa -out sa.key 2048
    openssl rsa -in sa.key -pubout -out sa.pub
  ) >"$DIR/openssl.log" 2>&1 || { cat "$DIR/openssl.log" >&2; die "openssl failed"; }
fi
if [ ! -f "$DIR/admin-token" ]; then
  (umask 077; openssl rand -hex 24 >"$DIR/admin-token")
fi
ADMIN_TOKEN="$(cat "$DIR/admin-token")"
{
  echo "$ADMIN_TOKEN,ssc-test-admin,ssc-test-admin-uid,system:masters"
  if [ -f "$DIR/extra-tokens.csv" ]; then cat "$DIR/extra-tokens.csv"; fi
} >"$DIR/tokens.csv"
chmod 600 "$DIR/tokens.csv"

# Audit policy: every request by a service account (the drivers under test) at Metadata
# level (who, verb, resource, status; no bodies), nothing else.
cat >"$DIR/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts"]
  - level: None
EOF

# --- processes ------------------------------------------------------------------------
ETCD_PID="" APISERVER_PID=""
# alive PID: running and not a zombie (our children stay zombies until reaped).
alive() { kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != Z ]; }
stop_all() {
  local pid
  for pid in "$APISERVER_PID" "$ETCD_PID"; do
    [ -n "$pid" ] || continue
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
    wait "$pid" 2>/dev/null || true
  done
  rm -f "$DIR/etcd.pid" "$DIR/kube-apiserver.pid"
  ETCD_PID="" APISERVER_PID=""
}
on_exit() { local rc=$?; if [ "$rc" -ne 0 ]; then stop_all; fi; }
trap on_exit EXIT

# wait_ready NAME PID LOG CMD...: run CMD until it succeeds; fail if PID exits or
# TIMEOUT passes. Returns 3 if the log says a port was taken (caller retries).
wait_ready() {
  local name="$1" pid="$2" log="$3" deadline=$((SECONDS + TIMEOUT))
  shift 3
  until "$@" >/dev/null 2>&1; do
    if ! alive "$pid"; then
      if grep -q "address already in use" "$log"; then return 3; fi
      echo "start-cluster: $name exited; last lines of $log:" >&2
      tail -n 30 "$log" >&2
      return 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "start-cluster: $name not ready after ${TIMEOUT}s; last lines of $log:" >&2
      tail -n 30 "$log" >&2
      return 1
    fi
    sleep 0.2
  done
}

etcd_healthy() { curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'; }
apiserver_ready() {
  [ "$(curl -s --max-time 2 --cacert "$PKI/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" \
        "https://127.0.0.1:$KUBE_PORT/readyz")" = ok ]
}

started=0
for _attempt in 1 2 3; do
  read -r ETCD_PORT KUBE_PORT < <(free_ports 2)
  # etcd: single member. The peer listener takes port 0 (it is never dialled); the
  # advertised peer URL is only a name in --initial-cluster.
  rm -rf "$DIR/etcd-data"
  nohup "$ETCD" \
    --name=ssc-test \
    --data-dir="$DIR/etcd-data" \
    --listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls=http://127.0.0.1:0 \
    --initial-advertise-peer-urls=http://127.0.0.1:2380 \
    --initial-cluster=ssc-test=http://127.0.0.1:2380 \
    --unsafe-no-fsync=true \
    --log-level=warn \
    </dev/null >"$DIR/etcd.log" 2>&1 &
  ETCD_PID=$!
  echo "$ETCD_PID" >"$DIR/etcd.pid"
  rc=0; wait_ready etcd "$ETCD_PID" "$DIR/etcd.log" etcd_healthy || rc=$?
  if [ "$rc" -eq 3 ]; then stop_all; continue; fi
  [ "$rc" -eq 0 ] || exit 1

  nohup "$KUBE_APISERVER" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 \
    --endpoint-reconciler-type=none \
    --secure-port="$KUBE_PORT" \
    --tls-cert-file="$PKI/apiserver.crt" \
    --tls-private-key-file="$PKI/apiserver.key" \
    --service-cluster-ip-range=10.0.0.0/24 \
    --service-account-issuer="https://127.0.0.1:$KUBE_PORT" \
    --service-account-key-file="$PKI/sa.pub" \
    --service-account-signing-key-file="$PKI/sa.key" \
    --token-auth-file="$DIR/tokens.csv" \
    --client-ca-file="$PKI/ca.crt" \
    --authorization-mode=RBAC \
    --allow-privileged=true \
    --enable-priority-and-fairness=false \
    --profiling="${KUBE_APISERVER_PROFILING:-false}" \
    --audit-policy-file="$DIR/audit-policy.yaml" \
    --audit-log-path="$DIR/audit.log" \
    --audit-log-format=json \
    --audit-log-maxsize=200 \
    </dev/null >"$DIR/kube-apiserver.log" 2>&1 &
  APISERVER_PID=$!
  echo "$APISERVER_PID" >"$DIR/kube-apiserver.pid"
  rc=0; wait_ready kube-apiserver "$APISERVER_PID" "$DIR/kube-apiserver.log" apiserver_ready || rc=$?
  if [ "$rc" -eq 3 ]; then stop_all; continue; fi
  [ "$rc" -eq 0 ] || exit 1
  started=1
  break
done
[ "$started" -eq 1 ] || die "ports kept being taken (3 attempts)"

KUBE_URL="https://127.0.0.1:$KUBE_PORT"
cat >"$DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: ssc-test
  cluster:
    server: $KUBE_URL
    certificate-authority: $PKI/ca.crt
users:
- name: ssc-test-admin
  user:
    token: $ADMIN_TOKEN
contexts:
- name: ssc-test
  context:
    cluster: ssc-test
    user: ssc-test-admin
current-context: ssc-test
EOF
chmod 600 "$DIR/kubeconfig"
cat >"$DIR/cluster.env" <<EOF
KUBE_URL=$KUBE_URL
ADMIN_TOKEN=$ADMIN_TOKEN
CA_FILE=$PKI/ca.crt
KUBECONFIG=$DIR/kubeconfig
ETCD_URL=http://127.0.0.1:$ETCD_PORT
SA_ISSUER=$KUBE_URL
SA_SIGNING_KEY=$PKI/sa.key
SA_PUBLIC_KEY=$PKI/sa.pub
AUDIT_LOG=$DIR/audit.log
EOF
chmod 600 "$DIR/cluster.env"
cat "$DIR/cluster.env"
