#!/bin/sh
# Stages /app of a runtime image, the same way in both image builds (deploy/Dockerfile's prune stage and
# scripts/kubernetes/images.sh): from a built tree SRC, copy into OUT the root manifests, protos/, and for each
# workspace the named services need at runtime its package.json, dist/ and prisma/ (migrations); then install exactly
# their production dependencies there (scripts/docker/prune-workspaces.js narrows the workspaces).
#   sh scripts/docker/stage-app.sh SRC OUT @conveyor/gateway [@conveyor/runner …]
# --ignore-scripts: nothing needs an install script except Claude Code's, which only links its native binary from the
# platform package npm already installed (no download), run explicitly below.
set -eu
src="$1"
out="$2"
shift 2
mkdir -p "$out/scripts/docker"
cp "$src/package.json" "$src/package-lock.json" "$out/"
cp -a "$src/protos" "$out/"
cp "$src/scripts/docker/prune-workspaces.js" "$out/scripts/docker/"
for manifest in "$src"/packages/*/package.json "$src"/services/*/package.json; do
  dir="${manifest#"$src"/}"
  dir="${dir%/package.json}"
  mkdir -p "$out/$dir"
  cp "$src/$dir/package.json" "$out/$dir/"
done
cd "$out"
node scripts/docker/prune-workspaces.js "$@" >workspaces
for dir in packages/* services/*; do
  if grep -qx "$dir" workspaces; then
    cp -a "$src/$dir/dist" "$dir/"
    if [ -d "$src/$dir/prisma" ]; then cp -a "$src/$dir/prisma" "$dir/"; fi
  else
    rm -rf "$dir"
  fi
done
npm install --omit=dev --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error
if [ -f node_modules/@anthropic-ai/claude-code/install.cjs ]; then
  (cd node_modules/@anthropic-ai/claude-code && node install.cjs)
fi
rm -rf workspaces scripts
