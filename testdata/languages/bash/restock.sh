#!/usr/bin/env bash
# Stock levels of a small shop, kept as "name count" lines.
set -euo pipefail

STOCK_FILE="${STOCK_FILE:-stock.txt}"
ORDERS_FILE="${ORDERS_FILE:-orders.txt}"

log() {
  printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

# Orders a batch of every item that runs low.
restock() {
  local threshold="${1:-5}" batch="${2:-20}"
  local name count wanted ordered=0
  while read -r name count; do
    if (( count >= threshold )); then
      continue
    fi
    wanted=$((batch - count))
    if (( wanted > 100 )); then
      log "large order for $name: $wanted"
      wanted=100
    fi
    echo "$name $wanted" >> "$ORDERS_FILE"
    ordered=$((ordered + 1))
  done < "$STOCK_FILE"
  sort -k2 -n -r -o "$ORDERS_FILE" "$ORDERS_FILE"
  echo "$ordered"
}

total() {
  awk '{ sum += $2 } END { print sum + 0 }' "$ORDERS_FILE"
}

usage() {
  cat <<EOF
usage: $(basename "$0") restock [threshold] [batch] | total
EOF
  exit 64
}

case "${1:-}" in
  restock) shift; restock "$@" ;;
  total) total ;;
  *) usage ;;
esac
