# shellcheck shell=bash
# Installs the chart k8s/chart onto the test cluster with k8s/values/kubernetes-test.yaml: PostgreSQL, Redis and
# Kafka stay on the host (scripts/infra.sh, Kafka with a listener on the node's address; socat forwards the other two
# there), the Secrets a platform team creates by hand are made here, then `helm upgrade --install` (the migrate Job
# first, as its pre-install hook) and a seeded team and key (the orchestrator's `conveyor` CLI inside its Pod).
# Sourced; needs cluster-env.sh, components.sh, `log`, ROOT and helm (deploy-tools.sh).

K8S_NAMESPACE=conveyor-test
K8S_KAFKA_POD_PORT="${K8S_KAFKA_POD_PORT:-19092}"

# The suite's own PostgreSQL, Redis and Kafka and data directory, apart from `npm test`'s (scripts/infra.sh's
# defaults), so the two suites run side by side (.ci/run; tests/deploy checks they stay apart). A caller may pick ports.
k8s_host_infra_env() {
  export PGPORT="${PGPORT:-15432}" REDIS_PORT="${REDIS_PORT:-16379}" KAFKA_PORT="${KAFKA_PORT:-19093}"
  export KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19094}" CONVEYOR_DATA_DIR="$ROOT/.conveyor/k8s"
}

# Host services reachable from Pods at the node's address: loopback-only servers get a forwarder.
start_host_infra() {
  KAFKA_EXTRA_LISTENER="$K8S_NODE_IP:$K8S_KAFKA_POD_PORT" bash "$ROOT/scripts/infra.sh" up
  eval "$(bash "$ROOT/scripts/infra.sh" env)"
  start_daemon forward-postgres socat "TCP-LISTEN:$PGPORT,bind=$K8S_NODE_IP,fork,reuseaddr" "TCP:127.0.0.1:$PGPORT"
  start_daemon forward-redis socat "TCP-LISTEN:$REDIS_PORT,bind=$K8S_NODE_IP,fork,reuseaddr" "TCP:127.0.0.1:$REDIS_PORT"
}

stop_host_forwarders() {
  stop_daemon forward-postgres
  stop_daemon forward-redis
}

# The URL of a loopback server as Pods reach it.
for_pods() { echo "${1//127.0.0.1/$K8S_NODE_IP}"; }

create_secrets() {
  local k=(kubectl_admin -n "$K8S_NAMESPACE") pki="$K8S_STATE/conveyor-pki" s
  # Restricted Pod Security as the overlays' namespaces; the label lets teardown find it.
  kubectl_admin create namespace "$K8S_NAMESPACE" --dry-run=client -o yaml | kubectl_admin label --local -f - -o yaml \
    pod-security.kubernetes.io/enforce=restricted conveyor.dev/test-cluster=true | kubectl_admin apply -f - >/dev/null
  "${k[@]}" create secret generic conveyor-secrets \
    --from-literal=DATABASE_URL="$(for_pods "$DATABASE_URL")" \
    --from-literal=REDIS_URL="$(for_pods "$REDIS_URL")" \
    --from-literal=KAFKA_BROKERS="$K8S_NODE_IP:$K8S_KAFKA_POD_PORT" \
    --from-literal=CONVEYOR_SECRETS_KEY="$(openssl rand -base64 32)" \
    --from-literal=BLOB_SIGNING_SECRET="$(openssl rand -hex 32)" \
    --dry-run=client -o yaml | kubectl_admin apply -f - >/dev/null
  node "$ROOT/services/orchestrator/dist/cli/main.js" pki init --dir "$pki" \
    --host conveyor-orchestrator --host "conveyor-orchestrator.$K8S_NAMESPACE.svc" >/dev/null
  for s in orchestrator gateway ingress runner; do
    "${k[@]}" create secret generic "conveyor-$s-tls" --from-file=ca.crt="$pki/ca.pem" \
      --from-file=tls.crt="$pki/$s.pem" --from-file=tls.key="$pki/$s-key.pem" \
      --dry-run=client -o yaml | kubectl_admin apply -f - >/dev/null
  done
}

# The snapshot store's hostPath volume (snapshots-volume.yaml beside this script): empty at each deploy (the
# cluster's database may outlive it, its snapshots do not), the runner's uid's (hostPath has no fsGroup).
K8S_SNAPSHOT_DIR=/var/lib/conveyor-k8s-test/snapshots
prepare_snapshot_volume() {
  rm -rf "$K8S_SNAPSHOT_DIR"
  mkdir -p "$K8S_SNAPSHOT_DIR"
  chown 1000:1000 "$K8S_SNAPSHOT_DIR"
  chmod 0700 "$K8S_SNAPSHOT_DIR"
}

deploy_platform() {
  create_secrets
  prepare_snapshot_volume
  kubectl_admin apply -f "$ROOT/scripts/kubernetes/snapshots-volume.yaml" >/dev/null
  log "helm upgrade --install: the migrate Job, then the four Deployments until ready…"
  bounded "helm upgrade --install conveyor k8s/chart" 660 "$CONVEYOR_TOOLS_DIR/bin/helm" --kubeconfig "$KUBECONFIG_ADMIN" \
    upgrade --install conveyor "$ROOT/k8s/chart" --namespace "$K8S_NAMESPACE" \
    --values "$ROOT/k8s/values/kubernetes-test.yaml" --wait --timeout 10m >/dev/null
}

# Prints the seeded team's API key.
seed_platform() {
  bounded "seeding the dev team (conveyor seed-dev in the orchestrator's Pod)" 180 \
    "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" -n "$K8S_NAMESPACE" exec deploy/conveyor-orchestrator -- \
    node services/orchestrator/dist/cli/main.js seed-dev | node -e \
    'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).apiKey))'
}

service_url() {
  local ip port
  ip="$(kubectl_admin -n "$K8S_NAMESPACE" get service "$1" -o jsonpath='{.spec.clusterIP}')"
  port="$(kubectl_admin -n "$K8S_NAMESPACE" get service "$1" -o jsonpath='{.spec.ports[0].port}')"
  echo "http://$ip:$port"
}
