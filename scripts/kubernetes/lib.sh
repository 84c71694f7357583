# shellcheck shell=bash
# Sources every part of the test cluster's scripts; expects ROOT. Sourced by cluster.sh and test.sh.
K8S_SCRIPTS="$ROOT/scripts/kubernetes"
log() { printf '\033[1;35m[k8s]\033[0m %s\n' "$*" >&2; }
for part in versions cluster-env packages build pki network components images deploy; do
  # shellcheck source=/dev/null
  source "$K8S_SCRIPTS/$part.sh"
done
