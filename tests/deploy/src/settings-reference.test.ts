import { spawnSync } from 'node:child_process';
import path from 'node:path';

// docs/settings.md is generated from the services' zod schemas (scripts/settings-reference.js); a setting added,
// removed, re-described or given a new default without regenerating it fails here, and so does a key, secret,
// password or token given a built-in default (every installation must generate its own).
const ROOT = path.resolve(__dirname, '../../..');

describe('docs/settings.md', () => {
  it('is what scripts/settings-reference.js generates from the built services, every setting described, no secret built in', () => {
    const check = spawnSync(process.execPath, ['scripts/settings-reference.js', '--check'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
