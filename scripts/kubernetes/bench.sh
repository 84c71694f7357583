#!/usr/bin/env bash
# bash scripts/kubernetes/bench.sh (root): the test cluster of `npm run test:kubernetes`, built, deployed and torn
# down the same way (and under the same one-cluster-per-machine lock), running `bench:time-to-agent-kubernetes`
# (bench/README.md) instead of the suite. The JSON lands in bench/results/<date>/ and on stdout; BENCH_* variables
# pass through. Arguments name suite files to run on the same cluster after it (`bench.sh unschedulable`).
set -euo pipefail
exec env CONVEYOR_K8S_BENCH=1 bash "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/test.sh" "$@"
