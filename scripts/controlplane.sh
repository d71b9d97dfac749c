#!/usr/bin/env bash
# The real control plane for tests: upstream's etcd and kube-apiserver, built from the Go module in
# test/controlplane (versions pinned by its go.sum), run on loopback with TLS and client
# certificates, --authorization-mode=Node,RBAC and the default admission plugins.
#
#   scripts/controlplane.sh build [CMD]      build (once per go.mod/go.sum/sources) and print the path of the server or of
#                                            another command: oracle, upstream, benchnodes, awsoracle
#   scripts/controlplane.sh start DIR [-- F] start in the background with state in DIR; print the admin kubeconfig's path
#   scripts/controlplane.sh stop DIR         stop it (SIGTERM; etcd and the API server close cleanly)
#
# The binary goes to a cache folder keyed by a hash of go.mod, go.sum and the Go sources, so a
# second build is a no-op, and Go's own build cache makes a rebuild after a source change ~10 s.
# Cold (empty Go build and module caches, 2 cores): ~4 minutes and ~2.3 GB of RSS for `go build`.
# test/controlplane/aws is a module of its own (cmd/awsoracle: cloud-provider-aws v1.35.3 with the
# dependencies its go.mod names), so that the AWS SDK's requirements never move the versions the
# kube-apiserver above is built with; both modules build into the same folder.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
module="$root/test/controlplane"

need_go() {
  if ! command -v go >/dev/null 2>&1; then
    echo "controlplane: Go is not on PATH; install Go 1.25 or newer (https://go.dev/dl) to build the real kube-apiserver" >&2
    exit 3
  fi
}

cache_key() {
  (cd "$module" && cat go.mod go.sum aws/go.mod aws/go.sum $(find . -name '*.go' | LC_ALL=C sort)) | sha256sum | cut -c1-16
}

cache_dir() {
  echo "${XDG_CACHE_HOME:-$HOME/.cache}/node-address-ccm/controlplane/$(cache_key)"
}

# Builds every command of both modules into the cache folder, once; prints the path of `$1`:
# controlplane (the server), oracle (upstream's node-address functions for the differential
# tests), upstream and benchnodes (the side-by-side benchmark), awsoracle (cloud-provider-aws).
build() {
  need_go
  local dir name="${1:-controlplane}"
  dir="$(cache_dir)"
  if [ ! -x "$dir/$name" ]; then
    echo "controlplane: building kube-apiserver, etcd and the oracle from test/controlplane (first time: a few minutes)" >&2
    local tmp="$dir.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    # -mod=readonly: the build uses go.sum as committed and never rewrites it.
    (cd "$module" && go build -mod=readonly -trimpath -o "$tmp/" ./cmd/...)
    (cd "$module/aws" && go build -mod=readonly -trimpath -o "$tmp/" ./cmd/...)
    mkdir -p "$(dirname "$dir")"
    # Another build may have finished first: either copy is the same build.
    mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
  fi
  [ -x "$dir/$name" ] || { echo "controlplane: no command $name in test/controlplane/cmd" >&2; exit 2; }
  echo "$dir/$name"
}

start() {
  local dir="$1"
  shift
  [ "${1:-}" = "--" ] && shift
  local bin
  bin="$(build)"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
    echo "controlplane: already running in $dir (pid $(cat "$dir/pid"))" >&2
    exit 1
  fi
  rm -f "$dir/ready.json"
  "$bin" --dir "$dir" -- "$@" >"$dir/ready.json" 2>"$dir/controlplane.log" &
  echo $! >"$dir/pid"
  for _ in $(seq 1 1200); do
    if [ -s "$dir/ready.json" ]; then
      echo "$dir/admin.kubeconfig"
      return
    fi
    if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
      echo "controlplane: exited before it was ready; the end of $dir/controlplane.log:" >&2
      tail -20 "$dir/controlplane.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "controlplane: not ready within 120 s; see $dir/controlplane.log" >&2
  exit 1
}

stop() {
  local dir="$1" pid
  [ -f "$dir/pid" ] || { echo "controlplane: nothing started in $dir" >&2; exit 1; }
  pid="$(cat "$dir/pid")"
  if kill -TERM "$pid" 2>/dev/null; then
    for _ in $(seq 1 300); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "controlplane: still running 30 s after SIGTERM; killing it" >&2
      kill -KILL "$pid"
    fi
  fi
  rm -f "$dir/pid"
}

case "${1:-}" in
  build) build "${2:-controlplane}" ;;
  start) [ $# -ge 2 ] || { echo "usage: $0 start DIR [-- kube-apiserver flags]" >&2; exit 2; }; shift; start "$@" ;;
  stop) [ $# -eq 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; stop "$2" ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
