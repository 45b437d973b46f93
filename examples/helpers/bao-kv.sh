#!/bin/sh
# exec-provider helper: one field of a KV v2 secret in OpenBao (or Vault), read with the
# `bao` CLI as the node, scoped to the pod's namespace: parameter `path` is read at
# <mount>/<pod namespace>/<path>, so a class can only reach its own namespace's secrets.
#   bao-kv.sh get|version <objectName> <pod namespace> <pod name> <service account>
# Parameters (SSC_PARAM_*): path (required), field (required for get), mount (default secret).
# The server, the CLI and the node's token come from bao-kv.conf next to this script, never
# from the class: a class that picked the address could send the node's token anywhere.
#   BAO=/usr/local/bin/bao
#   VAULT_ADDR=https://openbao.example:8200
#   TOKEN_FILE=/var/run/secrets/openbao/token
# Exit codes: 66 no such secret or field, 77 refused, 75 unreachable, 64 bad request.
set -eu
conf="${0%/*}/bao-kv.conf"
[ -r "$conf" ] || { echo "bao-kv.conf missing next to the helper" >&2; exit 78; }
BAO=bao VAULT_ADDR='' TOKEN_FILE=''
. "$conf"
op="${1:-}" namespace="${3:-}"
path="${SSC_PARAM_PATH:-}" field="${SSC_PARAM_FIELD:-}" mount="${SSC_PARAM_MOUNT:-secret}"
case "$path$mount" in *..*) echo "parameters path and mount must not hold .." >&2; exit 64 ;; esac
[ -n "$path" ] && [ -n "$namespace" ] || { echo "parameter path and the pod namespace are required" >&2; exit 64; }
VAULT_TOKEN="$(cat -- "$TOKEN_FILE")" || { echo "cannot read the token file" >&2; exit 78; }
export VAULT_ADDR VAULT_TOKEN
case "$op" in
  get) [ -n "$field" ] || { echo "parameter field is required" >&2; exit 64; }
       set -- kv get "-mount=$mount" "-field=$field" "$namespace/$path" ;;
  version) set -- read -field=current_version "$mount/metadata/$namespace/$path" ;;
  *) echo "usage: $0 get|version <objectName> <namespace> <pod> <serviceAccount>" >&2; exit 64 ;;
esac
err=bao.stderr # the working directory is a fresh one the provider removes
if "$BAO" "$@" 2>"$err"; then exit 0; fi
# One line saying what went wrong (the provider shows the first stderr line).
if grep -q 'permission denied' "$err"; then echo "openbao refused $mount/$namespace/$path" >&2; exit 77; fi
if grep -qE 'No value found|not present' "$err"; then echo "no secret or field at $mount/$namespace/$path" >&2; exit 66; fi
if grep -qE 'connection refused|no such host|timeout' "$err"; then echo "openbao at $VAULT_ADDR is unreachable" >&2; exit 75; fi
echo "bao failed: $(head -n 1 "$err")" >&2
exit 1
