# shellcheck shell=bash
# Debian packages of the test cluster: the container runtime (containerd 1.6, runc), the CNI plugins, the tools
# kube-proxy and kube-router call (iptables, ipset, conntrack), debootstrap for the images' root file system,
# catatonit as the pod sandbox's process, socat to forward loopback servers to the node's address. Sourced.
K8S_DEBIAN_PACKAGES=(containerd runc containernetworking-plugins iptables ipset conntrack debootstrap catatonit socat openssl)

ensure_host_packages() {
  local missing=() p
  for p in "${K8S_DEBIAN_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "apt-get install ${missing[*]}…"
  "$ROOT/scripts/lib/apt-get-locked.sh" update -qq
  "$ROOT/scripts/lib/apt-get-locked.sh" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
