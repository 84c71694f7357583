# shellcheck shell=bash
# The cluster's certificates, made with openssl (the kubeadm layout, reduced to one node): one CA signs the API
# server's serving certificate and every client's certificate; the client's identity is its CN (user) and O (group).
# Sourced; needs cluster-env.sh.

# pki_sign NAME CN [O] [SANS]: $K8S_PKI/NAME.{key,crt}, signed by the cluster CA (SANS: "DNS:x,IP:y").
pki_sign() {
  local name=$1 cn=$2 org=${3:-} sans=${4:-} subj="/CN=$2" ext
  [ -f "$K8S_PKI/$name.crt" ] && return 0
  [ -n "$org" ] && subj="/O=$org/CN=$cn"
  ext="$(mktemp)"
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n' >"$ext"
  [ -n "$sans" ] && echo "subjectAltName=$sans" >>"$ext"
  openssl req -new -newkey rsa:2048 -nodes -keyout "$K8S_PKI/$name.key" -subj "$subj" -out "$K8S_PKI/$name.csr" 2>/dev/null
  openssl x509 -req -in "$K8S_PKI/$name.csr" -CA "$K8S_PKI/ca.crt" -CAkey "$K8S_PKI/ca.key" -CAcreateserial \
    -days 30 -extfile "$ext" -out "$K8S_PKI/$name.crt" 2>/dev/null
  rm -f "$ext" "$K8S_PKI/$name.csr"
}

# pki_kubeconfig NAME: $K8S_PKI/NAME.kubeconfig authenticating with NAME's client certificate.
pki_kubeconfig() {
  cat >"$K8S_PKI/$1.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
  - name: conveyor
    cluster: {server: "https://$K8S_NODE_IP:$K8S_API_PORT", certificate-authority: "$K8S_PKI/ca.crt"}
users:
  - name: $1
    user: {client-certificate: "$K8S_PKI/$1.crt", client-key: "$K8S_PKI/$1.key"}
contexts:
  - name: conveyor
    context: {cluster: conveyor, user: $1}
current-context: conveyor
KC
}

ensure_pki() {
  mkdir -p "$K8S_PKI"
  if [ ! -f "$K8S_PKI/ca.crt" ]; then
    openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$K8S_PKI/ca.key" -subj "/CN=conveyor-test-cluster-ca" \
      -days 30 -out "$K8S_PKI/ca.crt" 2>/dev/null
  fi
  [ -f "$K8S_PKI/sa.key" ] || {
    openssl genrsa -out "$K8S_PKI/sa.key" 2048 2>/dev/null
    openssl rsa -in "$K8S_PKI/sa.key" -pubout -out "$K8S_PKI/sa.pub" 2>/dev/null
  }
  local svc=kubernetes.default.svc
  pki_sign apiserver kube-apiserver "" \
    "DNS:kubernetes,DNS:kubernetes.default,DNS:$svc,DNS:$svc.cluster.local,DNS:localhost,IP:$K8S_API_SERVICE_IP,IP:$K8S_NODE_IP,IP:127.0.0.1"
  pki_sign apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
  pki_sign kubelet-serving "$K8S_NODE_NAME" "" "DNS:$K8S_NODE_NAME,IP:$K8S_NODE_IP"
  pki_sign admin kubernetes-admin system:masters
  pki_sign controller-manager system:kube-controller-manager
  pki_sign scheduler system:kube-scheduler
  pki_sign kubelet "system:node:$K8S_NODE_NAME" system:nodes
  pki_sign kube-proxy system:kube-proxy
  # kube-router and CoreDNS get their own users, bound to the ClusterRoles of addons.yaml.
  pki_sign kube-router kube-router
  pki_sign coredns coredns
  local name
  for name in admin controller-manager scheduler kubelet kube-proxy kube-router coredns; do pki_kubeconfig "$name"; done
}
