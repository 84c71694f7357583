#!/usr/bin/env bash
# npm run test:kubernetes: a single-node cluster built from the registries (binaries cached in ~/.cache/conveyor-k8s),
# the platform's images built and loaded, the chart installed with helm (k8s/values/kubernetes-test.yaml), a migrated database and a seeded key, the
# suite of tests/kubernetes run through the gateway's and ingress's Services, then everything torn down. Prints how
# long each phase took and one closing line "kubernetes: N passed, N failed".
# Arguments go to jest (a test-file pattern: `npm run test:kubernetes -- rollout`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=../lib/bootstrap.sh
source "$ROOT/scripts/lib/bootstrap.sh"
# shellcheck source=lib.sh
source "$ROOT/scripts/kubernetes/lib.sh"
[ "$(id -u)" = 0 ] || {
  log "ERROR: the test cluster needs root (network, containerd, kubelet)"
  exit 1
}
# One test cluster per machine: its bridge, addresses and state directory are fixed (cluster-env.sh), so a second
# suite (another checkout's) waits for the first to tear down rather than both failing half-way. flock -o: the lock is
# held by flock itself, not inherited by the daemons the suite starts.
if [ -z "${CONVEYOR_K8S_SUITE_LOCKED:-}" ]; then
  lock=/run/lock/conveyor-k8s-suite.lock
  flock -n "$lock" true || log "another test cluster is running on this machine; waiting for it to finish…"
  exec env CONVEYOR_K8S_SUITE_LOCKED=1 flock -o "$lock" bash "${BASH_SOURCE[0]}" "$@"
fi
# Its own PostgreSQL, Redis and Kafka (Kafka needs the extra listener for Pods), unless the caller picks ports.
k8s_host_infra_env
MODEL_SERVER_PORT=18090 # k8s/values/kubernetes-test.yaml points the runner's ANTHROPIC_BASE_URL here

started=$(date +%s)
phase_start=$started
timings=()
phase() {
  local now
  now=$(date +%s)
  timings+=("$1 $((now - phase_start))s")
  phase_start=$now
}

teardown() {
  local status=$?
  log "tearing down…"
  bash "$ROOT/scripts/kubernetes/cluster.sh" down || true
  rm -rf "$K8S_SNAPSHOT_DIR"
  bash "$ROOT/scripts/infra.sh" down >/dev/null 2>&1 || true
  exit "$status"
}
trap teardown EXIT

ensure_built
phase build
ensure_host_packages
ensure_cluster_binaries
ensure_deploy_tools # helm
phase binaries
mkdir -p "$K8S_LOGS" "$K8S_RUN"
network_up
ensure_pki
start_control_plane
start_containerd
phase control-plane
build_images
import_images
phase images
start_node
phase node
start_host_infra
deploy_platform
api_key="$(seed_platform)"
phase deploy

export KUBECONFIG="$KUBECONFIG_ADMIN" KUBECTL="$K8S_BIN/kubectl"
export CONVEYOR_K8S_GATEWAY_URL="$(service_url conveyor-gateway)" CONVEYOR_K8S_INGRESS_URL="$(service_url conveyor-ingress)"
export CONVEYOR_K8S_API_KEY="$api_key" CONVEYOR_K8S_NAMESPACE="$K8S_NAMESPACE" CONVEYOR_K8S_NODE_IP="$K8S_NODE_IP"
export CONVEYOR_K8S_MODEL_SERVER_PORT="$MODEL_SERVER_PORT" CONVEYOR_K8S_POSTGRES="$K8S_NODE_IP:$PGPORT"
export CONVEYOR_K8S_REDIS="$K8S_NODE_IP:$REDIS_PORT" CONVEYOR_K8S_KAFKA="$K8S_NODE_IP:$K8S_KAFKA_POD_PORT"
status=0
if [ -n "${CONVEYOR_K8S_BENCH:-}" ]; then
  # scripts/kubernetes/bench.sh: the time-to-agent benchmark on this cluster, then only the suite's files named.
  (cd "$ROOT/bench" && timeout 3600 npm run -s bench:time-to-agent-kubernetes) || status=$?
  phase bench
  if [ $# -eq 0 ]; then
    log "phases: ${timings[*]}; total $(($(date +%s) - started))s"
    exit "$status"
  fi
fi
report="$ROOT/tests/kubernetes/.jest-results.json"
rm -f "$report"
(cd "$ROOT/tests/kubernetes" && timeout 1800 npx jest --runInBand --json --outputFile="$report" "$@") || status=$?
phase suite
log "phases: ${timings[*]}; total $(($(date +%s) - started))s"
if [ -f "$report" ]; then
  node -e 'const r = require(process.argv[1]); console.log(`kubernetes: ${r.numPassedTests} passed, ${r.numFailedTests} failed`)' "$report"
else
  echo "kubernetes: 0 passed, 1 failed"
  status=1
fi
exit "$status"
