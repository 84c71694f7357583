import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { documentedFiles, shellBlocks } from './doc-commands';
import { startPlatform, type RunningPlatform } from './platform';

// Every shell block of README.md, docs/*.md and deploy/README.md runs as a reader would paste it, against a started platform: the
// documented addresses (127.0.0.1:8080 the gateway, :8090 the ingress) are this platform's, `$KEY` is its seeded
// admin key (team_dev, as `npm start` seeds), and HTTP errors fail the block (curl --fail-with-body). Blocks that
// cannot run here carry `<!-- doc-test: skip — why -->` (docs/README.md).
const ROOT = path.resolve(__dirname, '../../..');
const blocks = documentedFiles(ROOT).flatMap((file) => shellBlocks(ROOT, file));
const runnable = blocks.filter((b) => !b.skipReason);

// An HTTP error fails the block, and its body goes to stderr even when the block captures curl's output.
const PRELUDE = `set -euo pipefail
curl() {
  local out rc=0
  out=$(command curl --fail-with-body "$@") || rc=$?
  if [ "$rc" -ne 0 ]; then echo "curl failed ($rc): $out" >&2; return "$rc"; fi
  printf '%s\\n' "$out"
}
`;

describe('the documentation’s shell commands', () => {
  let platform: RunningPlatform;
  let checkout: string;

  beforeAll(async () => {
    platform = await startPlatform();
    // A checkout of its own (the repository's files linked, no `.conveyor/`), so commands that write `.conveyor/…`
    // create a fresh installation's files instead of touching the developer's.
    checkout = mkdtempSync(path.join(os.tmpdir(), 'conveyor-doc-commands-'));
    for (const entry of readdirSync(ROOT).filter((e) => e !== '.conveyor' && e !== '.git'))
      symlinkSync(path.join(ROOT, entry), path.join(checkout, entry));
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    if (checkout) rmSync(checkout, { recursive: true, force: true });
  });

  it('finds the blocks a reader pastes, and every skipped one says why', () => {
    expect(runnable.length).toBeGreaterThan(5);
    for (const block of blocks.filter((b) => b.skipReason))
      expect(block.skipReason!.length).toBeGreaterThan(10);
  });

  // A reader follows one page in one terminal: a page's blocks run in order in one shell, sharing its variables.
  const pages = [...new Set(runnable.map((b) => b.name.split('#')[0]))];
  it.each(pages)(
    '%s: every block runs as written',
    (page) => {
      const gateway = new URL(platform.apiUrl).origin;
      const script = runnable
        .filter((b) => b.name.startsWith(`${page}#`))
        .map((b) => `echo '### ${b.name}' >&2\n${b.script}`)
        .join('\n')
        .replaceAll('http://127.0.0.1:8080', gateway)
        .replaceAll('http://127.0.0.1:8090', platform.ingressUrl);
      const result = spawnSync('bash', ['-c', PRELUDE + script], {
        cwd: checkout,
        env: { ...platform.env, KEY: platform.apiKey, CONVEYOR_DATA_DIR: path.join(checkout, '.conveyor') },
        encoding: 'utf8',
        timeout: 110_000,
      });
      // On failure the block's name (the last `###` line) and everything it printed show in the message.
      const outcome =
        result.status === 0 ? 'exit 0' : `exit ${result.status}\n${result.stdout}${result.stderr}`;
      expect(outcome).toBe('exit 0');
    },
    120_000,
  );
});
