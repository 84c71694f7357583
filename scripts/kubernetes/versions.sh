# shellcheck shell=bash
# Pinned versions of everything the single-node test cluster is built from. Sourced.
# Kubernetes stays on 1.34.x: it is the last minor whose kubelet still starts on a cgroup v1 host (this machine).
K8S_VERSION=v1.34.4
K8S_STAGING_VERSION=v0.34.4 # the published k8s.io/* staging modules of the same release
ETCD_VERSION=v3.6.5
KUBE_ROUTER_VERSION=v2.1.0
COREDNS_VERSION=v1.14.7
CRANE_VERSION=v0.20.6
K8S_CACHE="${K8S_CACHE:-$HOME/.cache/conveyor-k8s/$K8S_VERSION}"
K8S_BIN="$K8S_CACHE/bin"
export K8S_CACHE K8S_BIN
