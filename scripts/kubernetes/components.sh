# shellcheck shell=bash
# Starts and stops the cluster's processes: etcd, the control plane, containerd, kubelet, kube-proxy, kube-router
# (NetworkPolicy firewall only: one node has nothing to route, and this kernel has no IPVS for its service proxy) and
# CoreDNS on the host. Each runs in its own session with a pid file under $K8S_RUN and a log under $K8S_LOGS.
# Sourced; needs cluster-env.sh, versions.sh and `log`.

# start_daemon NAME COMMAND...: runs COMMAND in the background unless NAME's pid is alive.
start_daemon() {
  local name=$1
  shift
  if [ -f "$K8S_RUN/$name.pid" ] && kill -0 "$(cat "$K8S_RUN/$name.pid")" 2>/dev/null; then return 0; fi
  setsid "$@" >"$K8S_LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$K8S_RUN/$name.pid"
}

stop_daemon() {
  local pidfile="$K8S_RUN/$1.pid" pid i
  [ -f "$pidfile" ] || return 0
  pid="$(cat "$pidfile")"
  kill "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

# wait_for WHAT SECONDS COMMAND...: retries COMMAND every second.
wait_for() {
  local what=$1 seconds=$2 i
  shift 2
  for i in $(seq 1 "$seconds"); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 1
  done
  log "ERROR: $what not ready after ${seconds}s (logs: $K8S_LOGS)"
  return 1
}

# bounded WHAT SECONDS COMMAND...: COMMAND, stopped after SECONDS with an error naming WHAT (a slow machine must fail
# saying what it waited for, never hang until CI's own limit).
bounded() {
  local what=$1 seconds=$2 rc=0
  shift 2
  timeout "$seconds" "$@" || rc=$?
  [ "$rc" != 124 ] || log "ERROR: $what did not finish within ${seconds}s (logs: $K8S_LOGS)"
  return "$rc"
}

kubectl_admin() { "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

start_control_plane() {
  local p="$K8S_PKI"
  start_daemon etcd "$K8S_BIN/etcd" --name node --data-dir "$K8S_STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$K8S_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$K8S_ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((K8S_ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((K8S_ETCD_PORT + 1))" \
    --initial-cluster "node=http://127.0.0.1:$((K8S_ETCD_PORT + 1))" --listen-metrics-urls '' \
    --quota-backend-bytes 1073741824
  start_daemon kube-apiserver "$K8S_BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$K8S_ETCD_PORT" \
    --bind-address "$K8S_NODE_IP" --advertise-address "$K8S_NODE_IP" --secure-port "$K8S_API_PORT" \
    --service-cluster-ip-range "$K8S_SERVICE_CIDR" --allow-privileged=false \
    --client-ca-file "$p/ca.crt" --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$p/apiserver-kubelet-client.key" --kubelet-certificate-authority "$p/ca.crt" \
    --kubelet-preferred-address-types InternalIP \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --profiling=false
  wait_for kube-apiserver 120 kubectl_admin get --raw /readyz
  start_daemon kube-controller-manager "$K8S_BIN/kube-controller-manager" \
    --kubeconfig "$p/controller-manager.kubeconfig" --authentication-kubeconfig "$p/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$p/controller-manager.kubeconfig" --bind-address 127.0.0.1 --secure-port 10357 \
    --service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" --use-service-account-credentials \
    --allocate-node-cidrs --cluster-cidr "$K8S_CLUSTER_CIDR" --node-cidr-mask-size 24 \
    --service-cluster-ip-range "$K8S_SERVICE_CIDR" --leader-elect=false --profiling=false
  start_daemon kube-scheduler "$K8S_BIN/kube-scheduler" --kubeconfig "$p/scheduler.kubeconfig" \
    --authentication-kubeconfig "$p/scheduler.kubeconfig" --authorization-kubeconfig "$p/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port 10359 --leader-elect=false --profiling=false
  kubectl_admin apply -f "$K8S_SCRIPTS/addons-rbac.yaml" >/dev/null
}

start_containerd() {
  mkdir -p "$K8S_STATE/containerd" "$K8S_RUN"
  cat >"$K8S_STATE/containerd.toml" <<TOML
version = 2
root = "$K8S_STATE/containerd"
state = "$K8S_RUN/containerd"
[grpc]
  address = "$K8S_CONTAINERD_SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$K8S_PAUSE_IMAGE"
  # Pod sandboxes get oom_score_adj -998 and Guaranteed containers -997; lowering it needs CAP_SYS_RESOURCE, which
  # root lacks on some VMs (this one): runc then fails with "can't get final child's PID from pipe: EOF". Clamp to
  # containerd's own score instead.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$K8S_STATE/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
TOML
  start_daemon containerd containerd --config "$K8S_STATE/containerd.toml"
  wait_for containerd 30 ctr --address "$K8S_CONTAINERD_SOCK" version
}

start_node() {
  local p="$K8S_PKI"
  mkdir -p "$K8S_STATE/kubelet"
  cat >"$K8S_STATE/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$p/ca.crt"}
authorization: {mode: Webhook}
address: "$K8S_NODE_IP"
port: 10350
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10348
tlsCertFile: "$p/kubelet-serving.crt"
tlsPrivateKeyFile: "$p/kubelet-serving.key"
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: "unix://$K8S_CONTAINERD_SOCK"
clusterDNS: ["$K8S_DNS_IP"]
clusterDomain: cluster.local
resolvConf: ""
serializeImagePulls: false
evictionHard: {memory.available: 200Mi, nodefs.available: 2%, imagefs.available: 2%, nodefs.inodesFree: 2%}
# No image garbage collection: the images are loaded with ctr, not pulled, so one the kubelet removes is gone (on a
# disk other jobs filled past 85 %, it removed the pause image mid-suite and every new Pod failed to start).
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
YAML
  start_daemon kubelet "$K8S_BIN/kubelet" --config "$K8S_STATE/kubelet.yaml" --kubeconfig "$p/kubelet.kubeconfig" \
    --hostname-override "$K8S_NODE_NAME" --node-ip "$K8S_NODE_IP" --root-dir "$K8S_STATE/kubelet"
  wait_for "node $K8S_NODE_NAME" 120 kubectl_admin get node "$K8S_NODE_NAME"
  start_daemon kube-proxy "$K8S_BIN/kube-proxy" --kubeconfig "$p/kube-proxy.kubeconfig" --proxy-mode iptables \
    --hostname-override "$K8S_NODE_NAME" --cluster-cidr "$K8S_CLUSTER_CIDR" --nodeport-addresses "$K8S_NODE_IP/32" \
    --iptables-localhost-nodeports=false --conntrack-max-per-core 0 --conntrack-tcp-timeout-established 0 \
    --conntrack-tcp-timeout-close-wait 0 --metrics-bind-address 127.0.0.1:10349 \
    --healthz-bind-address 127.0.0.1:10356
  start_daemon kube-router "$K8S_BIN/kube-router" --kubeconfig "$p/kube-router.kubeconfig" \
    --hostname-override "$K8S_NODE_NAME" --run-firewall=true --run-router=false --run-service-proxy=false \
    --enable-cni=false --health-port 20244 --metrics-port 0
  cat >"$K8S_STATE/Corefile" <<COREFILE
.:53 {
  bind $K8S_DNS_IP
  errors
  kubernetes cluster.local in-addr.arpa {
    kubeconfig $p/coredns.kubeconfig conveyor
    fallthrough in-addr.arpa
  }
}
COREFILE
  start_daemon coredns "$K8S_BIN/coredns" -conf "$K8S_STATE/Corefile"
  wait_for "node Ready" 120 kubectl_admin wait --for=condition=Ready "node/$K8S_NODE_NAME" --timeout=1s
}

# Pods first (so the kubelet tears their sandboxes down through CNI), then the node, then the control plane; then
# whatever containers, mounts, cgroups and namespaces are left.
stop_cluster() {
  if [ -f "$K8S_RUN/kubelet.pid" ] && kubectl_admin get --raw /readyz >/dev/null 2>&1; then
    kubectl_admin delete namespace -l conveyor.dev/test-cluster=true --wait=false >/dev/null 2>&1 || true
    kubectl_admin delete pods --all -A --grace-period=0 --force --wait=true --timeout=60s >/dev/null 2>&1 || true
  fi
  local name
  for name in coredns kube-router kube-proxy kubelet kube-scheduler kube-controller-manager kube-apiserver etcd; do
    stop_daemon "$name"
  done
  # Each call bounded: a task whose process is already gone can make `tasks delete` wait forever.
  local ctr=(timeout 15 ctr --address "$K8S_CONTAINERD_SOCK" -n k8s.io) task
  if [ -S "$K8S_CONTAINERD_SOCK" ]; then
    for task in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
      "${ctr[@]}" tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true
      "${ctr[@]}" tasks delete -f "$task" >/dev/null 2>&1 || true
    done
    for task in $("${ctr[@]}" containers ls -q 2>/dev/null); do
      "${ctr[@]}" containers delete "$task" >/dev/null 2>&1 || true
    done
  fi
  stop_daemon containerd
  # Shims outlive containerd by design: end those started for this containerd's state directory.
  pgrep -f "containerd-shim-runc-v2 .*-address $K8S_CONTAINERD_SOCK" | xargs -r kill -9 2>/dev/null || true
  local mnt
  for mnt in $(awk -v s="$K8S_STATE" -v r="$K8S_RUN" 'index($2, s) == 1 || index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do
    umount -l "$mnt" 2>/dev/null || true
  done
  for mnt in $(ip netns list 2>/dev/null | awk '/^cni-/{print $1}'); do ip netns delete "$mnt" 2>/dev/null || true; done
  find /sys/fs/cgroup/*/kubepods* -depth -type d -exec rmdir {} \; 2>/dev/null || true
  rm -rf "$K8S_STATE/etcd" "$K8S_STATE/kubelet" "$K8S_STATE/cni-ipam"
}
