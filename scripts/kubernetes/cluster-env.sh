# shellcheck shell=bash
# Where the single-node test cluster lives and which addresses it uses. Everything is on this machine: the node's
# address is the gateway of a bridge the scripts create (no route leads off it, see network.sh), the API server and
# every component listen there or on loopback, on ports away from the usual ones so a cluster of someone else's can run
# beside it. Sourced.
K8S_STATE="${K8S_STATE:-$HOME/.cache/conveyor-k8s/state}" # certificates, etcd data, containerd, kubelet, logs
K8S_RUN=/run/conveyor-k8s                                 # sockets and pid files
K8S_PKI="$K8S_STATE/pki"
K8S_LOGS="$K8S_STATE/logs"
K8S_NODE_NAME=conveyor-node
K8S_BRIDGE=cnvy0
K8S_NODE_IP=10.244.0.1
K8S_POD_CIDR=10.244.0.0/24
K8S_CLUSTER_CIDR=10.244.0.0/16
K8S_SERVICE_CIDR=10.96.0.0/16
K8S_API_SERVICE_IP=10.96.0.1
K8S_DNS_IP="$K8S_NODE_IP" # CoreDNS runs on the host, on the node's address
K8S_API_PORT=16443
K8S_ETCD_PORT=12479
K8S_ROUTE_TABLE=245 # policy-routing table of pod traffic: the pod subnet and nothing else
K8S_CONTAINERD_SOCK="$K8S_RUN/containerd.sock"
KUBECONFIG_ADMIN="$K8S_PKI/admin.kubeconfig"
export K8S_STATE K8S_RUN K8S_PKI K8S_LOGS K8S_NODE_NAME K8S_NODE_IP KUBECONFIG_ADMIN K8S_CONTAINERD_SOCK
