import { readFileSync } from 'node:fs';

/**
 * Top self-time functions of V8 CPU profiles (`node --cpu-prof`, see BENCH_CPU_PROF_DIR):
 * `node dist/cpu-profile-top.js FILE.cpuprofile… [--top N]`. Self time per function (name, file, line), as a share of
 * the sampled time, on stdout as JSON lines; idle and GC stay in, so the shares add up to 100%.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const topIndex = args.indexOf('--top');
const top = topIndex >= 0 ? Number(args[topIndex + 1]) : 25;
const files = args.filter((a, i) => a !== '--top' && i !== topIndex + 1);

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame;
    const url = frame.url
      .replace(/^.*node_modules\//, '')
      .replace(/^file:\/\/.*\/(services|packages)\//, '$1/');
    const key = `${frame.functionName || '(anonymous)'} ${url}:${frame.lineNumber + 1}`;
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  console.log(JSON.stringify({ file, sampled_ms: Math.round(total / 1000) }));
  for (const [fn, us] of rows)
    console.log(
      JSON.stringify({
        self_pct: Number(((100 * us) / total).toFixed(1)),
        self_ms: Math.round(us / 1000),
        fn,
      }),
    );
}
