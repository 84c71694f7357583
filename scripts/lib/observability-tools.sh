# shellcheck shell=bash
# Jaeger (all-in-one), Prometheus and promtool, built from the Go module proxy for the tests that run them
# (tests/e2e tracing and Prometheus tests, `promtool test rules` over deploy/observability). Cached per user in
# $CONVEYOR_TOOLS_DIR like kustomize and kubeconform (deploy-tools.sh, which provides go_tool); each build is niced,
# and its wall time is appended to $CONVEYOR_TOOLS_DIR/build-times. Sourced; `log` comes from bootstrap.sh.

JAEGER_VERSION=v1.76.0 # the module of Jaeger v2 (cmd/jaeger, the OpenTelemetry-collector-based all-in-one)
PROMETHEUS_VERSION=v0.316.0

# go_module_tool NAME MODULE VERSION PACKAGE [go.mod lines]: builds PACKAGE inside a generated module that requires
# MODULE@VERSION (extra go.mod lines carry the module's own replace directives, which `go install` refuses to honour).
# GO_BUILD_TAGS, when set, are passed to the build.
go_module_tool() {
  local name=$1 module=$2 version=$3 pkg=$4 extra=${5:-} dir="$CONVEYOR_TOOLS_DIR/$1-$3" start
  if [ ! -x "$dir/$name" ]; then
    command -v go >/dev/null || { log "ERROR: Go is needed to build $name (install the golang package)"; return 1; }
    log "building $name $version from the Go module proxy (first run only)…"
    mkdir -p "$dir/src"
    printf 'module conveyor.local/%s-build\n\ngo 1.24\n\nrequire %s %s\n%s\n' "$name" "$module" "$version" "$extra" \
      >"$dir/src/go.mod"
    start=$(date +%s)
    (cd "$dir/src" && CGO_ENABLED=0 nice -n 19 go build -mod=mod -tags "${GO_BUILD_TAGS:-}" -trimpath -ldflags "-s -w" -o "$dir/$name.tmp" "$pkg")
    mv "$dir/$name.tmp" "$dir/$name"
    echo "$name $version $(($(date +%s) - start))s" >>"$CONVEYOR_TOOLS_DIR/build-times"
  fi
  ln -sfn "$dir/$name" "$CONVEYOR_TOOLS_DIR/bin/$name"
}

ensure_observability_tools() {
  mkdir -p "$CONVEYOR_TOOLS_DIR/bin"
  # Jaeger's go.mod pins sarama with a replace directive; the generated module repeats it.
  go_module_tool jaeger github.com/jaegertracing/jaeger "$JAEGER_VERSION" github.com/jaegertracing/jaeger/cmd/jaeger \
    'replace github.com/Shopify/sarama => github.com/Shopify/sarama v1.33.0'
  # The tests scrape static targets only: remove_all_sd leaves out the cloud service discoveries, whose SDKs are most of
  # Prometheus's build (the binary: 52 MB instead of 105 MB).
  GO_BUILD_TAGS=remove_all_sd go_module_tool prometheus github.com/prometheus/prometheus "$PROMETHEUS_VERSION" \
    github.com/prometheus/prometheus/cmd/prometheus
  GO_BUILD_TAGS=remove_all_sd go_module_tool promtool github.com/prometheus/prometheus "$PROMETHEUS_VERSION" \
    github.com/prometheus/prometheus/cmd/promtool
}
