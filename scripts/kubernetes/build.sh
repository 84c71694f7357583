# shellcheck shell=bash
# Builds the cluster's binaries from the Go module proxy into $K8S_BIN, once per pinned version. Each component gets
# its own generated module under $K8S_CACHE/src/<name> (a go.mod written here, nothing vendored): Kubernetes' own
# go.mod replaces its staging modules with ./staging/..., which a dependent module cannot see, so ours replaces them
# with their published versions. Builds run under `nice -n 19` (the machine is shared). Sourced; needs versions.sh and
# `log`.

# k8s_module DIR MODULE VERSION: a module that requires MODULE@VERSION (build with -mod=mod to resolve the rest).
k8s_module() {
  local dir=$1 module=$2 version=$3
  mkdir -p "$dir"
  printf 'module conveyor.local/k8s-build\n\ngo 1.24\n\nrequire %s %s\n' "$module" "$version" >"$dir/go.mod"
}

# The staging modules k8s.io/kubernetes replaces locally, each pinned to its published release.
k8s_staging_replaces() {
  local gomod
  gomod="$(cd "$1" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  sed -n 's#^\s*\(k8s.io/[^ ]*\) => ./staging/.*#\1#p' "$gomod" | while read -r m; do
    printf 'replace %s => %s %s\n' "$m" "$m" "$K8S_STAGING_VERSION"
  done
}

# go_build_into NAME DIR LDFLAGS PACKAGE: go build in DIR, niced, output $K8S_BIN/NAME; times go to $K8S_CACHE/build-times.
go_build_into() {
  local name=$1 dir=$2 ldflags=$3 pkg=$4 start
  [ -x "$K8S_BIN/$name" ] && return 0
  start=$(date +%s)
  log "building $name ($pkg)…"
  (cd "$dir" && bounded "go build of $name" 3600 env CGO_ENABLED=0 nice -n 19 go build -mod=mod -trimpath -ldflags "-s -w $ldflags" -o "$K8S_BIN/$name.tmp" "$pkg")
  mv "$K8S_BIN/$name.tmp" "$K8S_BIN/$name"
  echo "$name $(($(date +%s) - start))s" >>"$K8S_CACHE/build-times"
}

build_kubernetes() {
  local dir="$K8S_CACHE/src/kubernetes" v=k8s.io/component-base/version minor
  minor="${K8S_VERSION#v1.}"
  minor="${minor%%.*}"
  k8s_module "$dir" k8s.io/kubernetes "$K8S_VERSION"
  k8s_staging_replaces "$dir" >>"$dir/go.mod"
  local ld="-X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
  local c
  for c in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
    go_build_into "$c" "$dir" "$ld" "k8s.io/kubernetes/cmd/$c"
  done
}

build_cluster_tools() {
  local src="$K8S_CACHE/src"
  k8s_module "$src/etcd" go.etcd.io/etcd/server/v3 "$ETCD_VERSION"
  go_build_into etcd "$src/etcd" "" go.etcd.io/etcd/server/v3
  k8s_module "$src/kube-router" github.com/cloudnativelabs/kube-router/v2 "$KUBE_ROUTER_VERSION"
  go_build_into kube-router "$src/kube-router" "" github.com/cloudnativelabs/kube-router/v2/cmd/kube-router
  k8s_module "$src/coredns" github.com/coredns/coredns "$COREDNS_VERSION"
  go_build_into coredns "$src/coredns" "" github.com/coredns/coredns
  k8s_module "$src/crane" github.com/google/go-containerregistry "$CRANE_VERSION"
  go_build_into crane "$src/crane" "" github.com/google/go-containerregistry/cmd/crane
}

ensure_cluster_binaries() {
  mkdir -p "$K8S_BIN"
  build_cluster_tools
  build_kubernetes
}
