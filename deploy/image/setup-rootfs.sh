#!/bin/sh
# Finishes the runtime root file system, the same way in both image builds: deploy/Dockerfile runs it in the runtime
# stage (node:20-bookworm-slim), scripts/kubernetes/images.sh in a chroot of its debootstrap tree. Installs what
# packages.txt lists and is missing (debootstrap already installed them), then the accounts: `node` (uid 1000) runs the
# services, `conveyor-runner` is the account a bubblewrap runner drops to after forking its privileged helper.
#   sh setup-rootfs.sh            (as root, inside the root file system)
set -eu
here="$(dirname "$0")"
missing=""
for pkg in $(grep -v '^#' "$here/packages.txt"); do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  apt-get update
  # shellcheck disable=SC2086 # one word per package
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
fi
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/apt/archives/*.deb
id node >/dev/null 2>&1 || { groupadd -g 1000 node && useradd -u 1000 -g 1000 -m -s /bin/sh node; }
id conveyor-runner >/dev/null 2>&1 ||
  useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin conveyor-runner
mkdir -p /workspaces
chown node:node /workspaces
