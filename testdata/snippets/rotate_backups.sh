#!/usr/bin/env bash
# Rotates the nightly database backups.
set -euo pipefail

readonly BACKUP_DIR="${BACKUP_DIR:-/var/backups/db}"
readonly KEEP_DAYS=14

log() {
  printf '%s [%s] %s\n' "$(date +%FT%T)" "$1" "${*:2}" >&2
}

rotate() {
  local dir="$1" keep="${2:-$KEEP_DAYS}"
  local removed=0
  for file in "$dir"/*.sql.gz; do
    [[ -e "$file" ]] || continue
    if [[ $(find "$file" -mtime +"$keep") ]]; then
      rm -f -- "$file"
      removed=$((removed + 1))
      log INFO "removed $file (older than $keep days)"
    fi
  done
  echo "$removed"
}

report() {
  cat <<EOF_REPORT
Backups in $BACKUP_DIR: $(ls "$BACKUP_DIR" | wc -l)
Removed today: $1
EOF_REPORT
}

case "${1:-rotate}" in
  rotate) report "$(rotate "$BACKUP_DIR")" ;;
  *) log ERROR "unknown command: $1"; exit 2 ;;
esac
