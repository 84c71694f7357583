import { readFileSync } from 'node:fs';

/**
 * Top self-time functions of V8 CPU profiles (`node --cpu-prof`, see BENCH_CPU_PROF_DIR):
 * `node dist/cpu-profile-top.js FILE.cpuprofile… [--top N] [--by module]`. Self time per function (name, file, line),
 * or with `--by module` per module (a package under node_modules, a service's or package's folder, node's internals),
 * as a share of the sampled time, on stdout as JSON lines; idle and GC stay in, so the shares add up to 100%.
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
const option = (name: string): string | undefined => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};
const top = Number(option('--top') ?? 25);
const byModule = option('--by') === 'module';
const files = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));

/** The module a frame's file belongs to: `kafkajs`, `@prisma/client`, `services/orchestrator/dist/runs`, `node:…`. */
function moduleOf({ url, functionName }: ProfileNode['callFrame']): string {
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return dependency[1]!;
  const own = /\/((?:services|packages)\/.*)\/[^/]+$/.exec(url);
  if (own) return own[1]!;
  if (!url) return functionName || '(native)'; // (garbage collector), (idle), (program)
  return url.startsWith('node:') ? url.split('/')[0]! : url;
}

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
    const key = byModule
      ? moduleOf(frame)
      : `${frame.functionName || '(anonymous)'} ${url}:${frame.lineNumber + 1}`;
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
