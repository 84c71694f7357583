# shellcheck shell=bash
# The node's network: a bridge whose address is the node's, the pods' veths on it (the CNI bridge plugin), and a
# policy route so that traffic from pods reaches the pod subnet and this machine's own addresses and nothing else
# (no masquerade, no default route off the machine). Teardown removes every interface, route, sysctl change,
# iptables chain and ipset the cluster made. Sourced; needs cluster-env.sh and `log`.

network_up() {
  mkdir -p "$K8S_RUN"
  [ -f "$K8S_RUN/ip_forward.orig" ] || cat /proc/sys/net/ipv4/ip_forward >"$K8S_RUN/ip_forward.orig"
  if ! ip link show "$K8S_BRIDGE" >/dev/null 2>&1; then
    ip link add "$K8S_BRIDGE" type bridge
    ip addr add "$K8S_NODE_IP/24" dev "$K8S_BRIDGE"
  fi
  ip link set "$K8S_BRIDGE" up
  # Forwarding is needed between pods (a Service address is translated on the way through the node) and the
  # bridge's frames must cross iptables for kube-proxy and kube-router to see them.
  sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  # Service addresses are translated by kube-proxy on the way out; should it be down, they still stay on the bridge.
  ip route replace "$K8S_SERVICE_CIDR" dev "$K8S_BRIDGE" src "$K8S_NODE_IP"
  ip route replace "$K8S_POD_CIDR" dev "$K8S_BRIDGE" table "$K8S_ROUTE_TABLE"
  ip route replace blackhole default table "$K8S_ROUTE_TABLE"
  ip rule show | grep -q "lookup $K8S_ROUTE_TABLE" ||
    ip rule add iif "$K8S_BRIDGE" lookup "$K8S_ROUTE_TABLE" priority "$K8S_ROUTE_TABLE"
  mkdir -p "$K8S_STATE/cni"
  cat >"$K8S_STATE/cni/10-conveyor.conflist" <<CNI
{
  "cniVersion": "1.0.0",
  "name": "conveyor",
  "plugins": [
    {
      "type": "bridge", "bridge": "$K8S_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local", "dataDir": "$K8S_STATE/cni-ipam",
        "ranges": [[{ "subnet": "$K8S_POD_CIDR", "gateway": "$K8S_NODE_IP" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
CNI
}

# iptables_cleanup: the chains kube-proxy (KUBE-*), kube-router (KUBE-ROUTER-*, KUBE-POD-FW-*, KUBE-NWPLCY-*) and the
# CNI plugins (CNI-*) created, and the jumps to them from the built-in chains; then kube-router's ipsets.
iptables_cleanup() {
  local table rule chain
  for table in filter nat mangle raw; do
    # awk, not grep: no match is not a failure under `set -o pipefail`.
    iptables -t "$table" -S 2>/dev/null | awk '/^-A [A-Z]+ .*-j (KUBE-|CNI-)/ && !/^-A (KUBE-|CNI-)/' |
      while read -r rule; do eval "iptables -t $table ${rule/-A/-D}" 2>/dev/null || true; done
    for chain in $(iptables -t "$table" -S 2>/dev/null | sed -n 's/^-N \(\(KUBE\|CNI\)-[^ ]*\)/\1/p'); do
      iptables -t "$table" -F "$chain" 2>/dev/null || true
    done
    for chain in $(iptables -t "$table" -S 2>/dev/null | sed -n 's/^-N \(\(KUBE\|CNI\)-[^ ]*\)/\1/p'); do
      iptables -t "$table" -X "$chain" 2>/dev/null || true
    done
  done
  for chain in $(ipset list -n 2>/dev/null | awk '/^(KUBE-|kube-router-|inet6:KUBE-)/'); do
    ipset destroy "$chain" 2>/dev/null || true
  done
}

network_down() {
  iptables_cleanup
  ip rule del iif "$K8S_BRIDGE" lookup "$K8S_ROUTE_TABLE" 2>/dev/null || true
  ip route flush table "$K8S_ROUTE_TABLE" 2>/dev/null || true
  local veth
  for veth in $(ip -o link show master "$K8S_BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    ip link del "$veth" 2>/dev/null || true
  done
  ip link del "$K8S_BRIDGE" 2>/dev/null || true
  if [ -f "$K8S_RUN/ip_forward.orig" ]; then
    sysctl -qw "net.ipv4.ip_forward=$(cat "$K8S_RUN/ip_forward.orig")"
    rm -f "$K8S_RUN/ip_forward.orig"
  fi
}
