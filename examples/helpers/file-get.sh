#!/bin/sh
# exec-provider helper: serves files from the directory file-get.d/ next to this script
# (the node's copy; the class names one with the parameter `path`). No version
# subcommand: it exits 3, so the provider versions the content with its keyed digest.
#   file-get.sh get <objectName> <pod namespace> <pod name> <service account>
# Exit codes (docs/providers/exec.md): 64 bad request, 66 no such file, 3 no versions.
set -eu
base="${0%/*}/file-get.d"
case "${1:-}" in
  version) exit 3 ;;
  get) ;;
  *) echo "usage: $0 get|version <objectName> <namespace> <pod> <serviceAccount>" >&2; exit 64 ;;
esac
path="${SSC_PARAM_PATH:-}"
# A relative path without "..": the class must not name files outside file-get.d/.
case "$path" in
  '' | /* | .. | ../* | */.. | */../*) echo "parameter path must be a relative path inside file-get.d without .." >&2; exit 64 ;;
esac
[ -f "$base/$path" ] || { echo "no file $path in file-get.d" >&2; exit 66; }
# Symlinks are followed only when they stay inside file-get.d.
real="$(realpath -e -- "$base/$path")" root="$(realpath -e -- "$base")"
case "$real" in "$root"/*) ;; *) echo "parameter path leads outside file-get.d" >&2; exit 64 ;; esac
exec cat -- "$real"
