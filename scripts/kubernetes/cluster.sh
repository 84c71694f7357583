#!/usr/bin/env bash
# The single-node Kubernetes test cluster (docs in deploy/README.md, "Trying it on one machine"):
#   bash scripts/kubernetes/cluster.sh up      build what is missing (cached), start the cluster, load the images
#   bash scripts/kubernetes/cluster.sh down    stop everything it started, remove its interfaces and iptables rules
#   bash scripts/kubernetes/cluster.sh env     print `export KUBECONFIG=…` and the PATH of kubectl
# Runs as root (network, containerd, kubelet).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=lib.sh
source "$ROOT/scripts/kubernetes/lib.sh"

cluster_up() {
  ensure_host_packages
  ensure_cluster_binaries
  mkdir -p "$K8S_LOGS" "$K8S_RUN"
  network_up
  ensure_pki
  start_control_plane
  start_containerd
  build_images
  import_images
  start_node
}

cluster_down() {
  stop_cluster
  stop_host_forwarders
  network_down
}

case "${1:-}" in
  up) cluster_up ;;
  down) cluster_down ;;
  env) printf 'export KUBECONFIG=%q PATH=%q:"$PATH"\n' "$KUBECONFIG_ADMIN" "$K8S_BIN" ;;
  *)
    echo "usage: $0 up|down|env" >&2
    exit 2
    ;;
esac
