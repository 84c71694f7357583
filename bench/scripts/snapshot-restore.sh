#!/usr/bin/env bash
# Restore of a 500 MB environment snapshot on this machine's disk, the way the Kubernetes backend does it without CSI
# snapshots (docs/sandbox.md): `tar --extract` of the uncompressed archive into an empty workspace, page cache cold
# and warm, against a plain directory copy and a reflink copy. Prints JSON on stdout. Root (drops the page cache).
# BENCH_DIR keeps the generated workspace between runs; BENCH_REPEAT (default 3) runs of each.
set -euo pipefail
dir="${BENCH_DIR:-$(mktemp -d)}"
repeat="${BENCH_REPEAT:-3}"
ws="$dir/ws"
# node_modules-like: 200 packages of 100 files of 8 KiB (~160 MB), and 17 files of 20 MiB (~340 MB).
if [ ! -d "$ws" ]; then
  mkdir -p "$ws/node_modules" "$ws/big"
  for d in $(seq 1 200); do
    mkdir -p "$ws/node_modules/p$d"
    for f in $(seq 1 100); do head -c 8192 /dev/urandom >"$ws/node_modules/p$d/f$f.js"; done
  done
  for i in $(seq 1 17); do head -c 20971520 /dev/urandom >"$ws/big/b$i.bin"; done
fi
[ -f "$dir/ws.tar" ] || (cd "$ws" && tar --create --file="$dir/ws.tar" --numeric-owner .)
seconds() { # seconds COMMAND…: wall time of the command, 3 decimals
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || return 1
  end=$(date +%s%N)
  echo "scale=3; ($end - $start) / 1000000000" | bc
}
cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
untar() { rm -rf "$dir/out"; mkdir "$dir/out"; tar --extract --file="$dir/ws.tar" --no-same-owner --no-same-permissions --directory="$dir/out"; }
results=()
for i in $(seq 1 "$repeat"); do
  rm -rf "$dir/out"; cold; results+=("{\"case\":\"untar-cold\",\"s\":$(seconds untar)}")
  results+=("{\"case\":\"untar-warm\",\"s\":$(seconds untar)}")
  rm -rf "$dir/out"; results+=("{\"case\":\"cp-a\",\"s\":$(seconds cp -a "$ws" "$dir/out")}")
done
rm -rf "$dir/out"
reflink=$(cp --reflink=always "$ws/big/b1.bin" "$dir/reflink" 2>/dev/null && echo true || echo false)
rm -f "$dir/reflink"
printf '{"bytes":%s,"files":%s,"archiveBytes":%s,"filesystem":"%s","reflink":%s,"cores":%s,"loadavg":"%s","runs":[%s]}\n' \
  "$(du -sb "$ws" | cut -f1)" "$(find "$ws" -type f | wc -l)" "$(stat -c %s "$dir/ws.tar")" \
  "$(findmnt -n -o FSTYPE --target "$dir")" "$reflink" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" \
  "$(IFS=,; echo "${results[*]}")"
