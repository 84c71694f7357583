# shellcheck shell=bash
# The platform's images without a Docker engine or a registry: a Debian bookworm root file system from debootstrap
# (minbase plus deploy/image/packages.txt), the host's Node 20 binary, and one application layer holding the
# four services' dist/ and their production node_modules. One image, four names that differ only in their command
# (deploy/Dockerfile builds the same layers per service with a build argument), plus the default run image (the same layers with
# no command: the runner's harness CLIs are at the same paths as in the runner), a second run image for the
# docker_image test, and the pod sandbox ("pause") image, Debian's static catatonit. crane assembles them in its
# in-memory registry on loopback; ctr imports them into the cluster's containerd. Sourced; needs versions.sh,
# cluster-env.sh, `log` and ROOT.

K8S_IMAGE_TAG=k8s-test
K8S_PAUSE_IMAGE=conveyor.local/pause:1
K8S_IMAGES="$K8S_CACHE/images"
K8S_REGISTRY_PORT=15055
SERVICES=(gateway orchestrator ingress runner)

debian_mirror() {
  sed -n 's#^URIs: \(http[^ ]*/debian\)$#\1#p; s#^deb \(http[^ ]*/debian\) bookworm main.*#\1#p' \
    /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -1
}

# The recipe deploy/Dockerfile follows too: deploy/image/packages.txt (debootstrap --include here, apt-get there),
# deploy/image/setup-rootfs.sh (accounts, /workspaces) and scripts/docker/stage-app.sh (/app). Each layer is cached
# under a key of its inputs, so a warm run rebuilds neither unless they changed.
# inputs_key 'PATTERN'…: a hash of the files under the patterns (globs expanded in $ROOT, hence quoted by callers).
inputs_key() {
  # shellcheck disable=SC2048,SC2086 # the patterns are globbed here, after the cd
  (cd "$ROOT" && shopt -s nullglob && find $* -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16
}

# cached LAYER KEY: whether $K8S_IMAGES/LAYER.tar was built from inputs of this key.
cached() { [ -f "$K8S_IMAGES/$1.tar" ] && [ "$(cat "$K8S_IMAGES/$1.key" 2>/dev/null)" = "$2" ]; }

# base.tar: the root file system (first run, or when deploy/image/ changes).
build_base_layer() {
  local major rootfs="$K8S_IMAGES/rootfs" key packages
  key="$(inputs_key deploy/image)"
  cached base "$key" && return 0
  major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$major" = 20 ] || {
    log "ERROR: the images carry this machine's Node, which is $major, not 20"
    return 1
  }
  packages="$(grep -v '^#' "$ROOT/deploy/image/packages.txt" | paste -sd, -)"
  log "debootstrap: Debian bookworm minbase + $packages…"
  rm -rf "$rootfs"
  bounded debootstrap 1800 nice -n 19 debootstrap --variant=minbase --include="$packages" \
    bookworm "$rootfs" "$(debian_mirror)" >"$K8S_IMAGES/debootstrap.log" 2>&1
  install -m 0755 "$(readlink -f "$(command -v node)")" "$rootfs/usr/local/bin/node"
  cp -a "$ROOT/deploy/image" "$rootfs/tmp/image"
  chroot "$rootfs" sh /tmp/image/setup-rootfs.sh
  rm -rf "$rootfs/tmp/image"
  tar --numeric-owner -C "$rootfs" -cf "$K8S_IMAGES/base.tar.tmp" .
  mv "$K8S_IMAGES/base.tar.tmp" "$K8S_IMAGES/base.tar"
  echo "$key" >"$K8S_IMAGES/base.key"
  rm -rf "$rootfs"
}

# app.tar: /app with the four services, their packages' dist/, production dependencies and the protos; rebuilt when
# the lock file, a manifest, a dist/ or the staging script changed.
build_app_layer() {
  local stage="$K8S_IMAGES/app-root" key
  key="$(inputs_key package.json package-lock.json protos scripts/docker 'packages/*/package.json' \
    'services/*/package.json' 'packages/*/dist' 'services/*/dist' 'packages/*/prisma')"
  if cached app "$key"; then
    log "app layer: cached ($key)"
    return 0
  fi
  rm -rf "$stage"
  # npm's cache is warm from the host's install.
  bounded "the app layer's npm install" 900 nice -n 19 sh "$ROOT/scripts/docker/stage-app.sh" "$ROOT" "$stage/app" "${SERVICES[@]/#/@conveyor/}"
  tar --numeric-owner --owner=0 --group=0 -C "$stage" -cf "$K8S_IMAGES/app.tar" app
  echo "$key" >"$K8S_IMAGES/app.key"
  rm -rf "$stage"
}

build_pause_layer() {
  local stage="$K8S_IMAGES/pause-root"
  mkdir -p "$stage"
  install -m 0755 /usr/bin/catatonit "$stage/catatonit"
  tar --numeric-owner --owner=0 --group=0 -C "$stage" -cf "$K8S_IMAGES/pause.tar" catatonit
  rm -rf "$stage"
}

# build_images: every image into $K8S_IMAGES/images.tar (docker archive, one file for ctr import).
build_images() {
  mkdir -p "$K8S_IMAGES"
  build_base_layer
  build_app_layer
  build_pause_layer
  assemble_images
}

assemble_images() {
  local reg="127.0.0.1:$K8S_REGISTRY_PORT" crane="$K8S_BIN/crane" pid svc refs=()
  "$K8S_BIN/crane" registry serve --address "$reg" >"$K8S_IMAGES/registry.log" 2>&1 &
  pid=$!
  # shellcheck disable=SC2064
  trap "kill $pid 2>/dev/null" RETURN
  wait_for "crane registry" 30 "$crane" catalog --insecure "$reg"
  local base="$reg/conveyor/platform:$K8S_IMAGE_TAG"
  "$crane" append --insecure --oci-empty-base -f "$K8S_IMAGES/base.tar" -f "$K8S_IMAGES/app.tar" -t "$base" >/dev/null 2>&1
  # An empty base has no platform, and containerd's import drops images of no platform.
  "$crane" mutate --insecure --set-platform linux/amd64 -t "$base" "$base" >/dev/null 2>&1
  local common=(--insecure --workdir /app --user 1000:1000 --env NODE_ENV=production
    --env PATH=/usr/local/bin:/usr/bin:/bin)
  for svc in "${SERVICES[@]}"; do
    "$crane" mutate "${common[@]}" --entrypoint /usr/bin/tini,-- --cmd "node,services/$svc/dist/main.js" \
      -t "$reg/conveyor/$svc:$K8S_IMAGE_TAG" "$base" >/dev/null 2>&1
    refs+=("$reg/conveyor/$svc:$K8S_IMAGE_TAG")
  done
  "$crane" mutate "${common[@]}" --cmd /bin/sh -t "$reg/conveyor/run:$K8S_IMAGE_TAG" "$base" >/dev/null 2>&1
  # The same image with a marker file: an environment naming it proves its docker_image reaches the Pod.
  mkdir -p "$K8S_IMAGES/marker/etc"
  echo conveyor-run-alt >"$K8S_IMAGES/marker/etc/conveyor-image"
  tar --owner=0 --group=0 -C "$K8S_IMAGES/marker" -cf "$K8S_IMAGES/marker.tar" etc
  "$crane" append --insecure -b "$reg/conveyor/run:$K8S_IMAGE_TAG" -f "$K8S_IMAGES/marker.tar" \
    -t "$reg/conveyor/run-alt:$K8S_IMAGE_TAG" >/dev/null 2>&1
  "$crane" append --insecure --oci-empty-base -f "$K8S_IMAGES/pause.tar" -t "$reg/conveyor/pause:1" >/dev/null 2>&1
  "$crane" mutate --insecure --set-platform linux/amd64 --entrypoint /catatonit,-P -t "$reg/conveyor/pause:1" "$reg/conveyor/pause:1" >/dev/null 2>&1
  refs+=("$reg/conveyor/run:$K8S_IMAGE_TAG" "$reg/conveyor/run-alt:$K8S_IMAGE_TAG" "$reg/conveyor/pause:1")
  bounded "crane pull of the images" 600 "$crane" pull --insecure "${refs[@]}" "$K8S_IMAGES/images.tar" 2>/dev/null
}

# import_images: into the cluster's containerd, under the names the manifests use.
import_images() {
  local ctr=(ctr --address "$K8S_CONTAINERD_SOCK" -n k8s.io) reg="127.0.0.1:$K8S_REGISTRY_PORT" name
  bounded "ctr images import" 600 "${ctr[@]}" images import "$K8S_IMAGES/images.tar" >/dev/null
  for name in "${SERVICES[@]}" run run-alt; do
    "${ctr[@]}" images tag --force "$reg/conveyor/$name:$K8S_IMAGE_TAG" "docker.io/conveyor/$name:$K8S_IMAGE_TAG" >/dev/null
    "${ctr[@]}" images rm "$reg/conveyor/$name:$K8S_IMAGE_TAG" >/dev/null
  done
  "${ctr[@]}" images tag --force "$reg/conveyor/pause:1" "$K8S_PAUSE_IMAGE" >/dev/null
  "${ctr[@]}" images rm "$reg/conveyor/pause:1" >/dev/null
}
