import { spawnSync } from 'node:child_process';
import path from 'node:path';

// docs/settings.md is generated from the services' zod schemas (scripts/settings-reference.js); a setting added,
// removed, re-described or given a new default without regenerating it fails here.
const ROOT = path.resolve(__dirname, '../../..');

describe('docs/settings.md', () => {
  it('is what scripts/settings-reference.js generates from the built services, every setting described', () => {
    const check = spawnSync(process.execPath, ['scripts/settings-reference.js', '--check'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
