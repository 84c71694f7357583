import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inlinable, MAX_INLINE_BYTES, withPrelude } from './launch-prelude';

// The prelude is shell run in the sandbox; here it runs under the host's /bin/sh, as the sandbox's would.
const run = (argv: [string, ...string[]], cwd: string) =>
  spawnSync(argv[0], argv.slice(1), { cwd, encoding: 'utf8' });

describe('the launch prelude', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'prelude-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('makes the directories and writes the files byte for byte, then runs the command in the same process', () => {
    const home = path.join(dir, '.home');
    const skill = path.join(home, '.claude', 'skills', 'run', 'SKILL.md');
    // Shell text in a content or a path stays data: nothing of it runs.
    const content = `--- \n$(touch ${dir}/pwned) \`touch ${dir}/pwned\` "$HOME" '\\n'\n\n`;
    const odd = path.join(home, '$(touch pwned)', 'a b');
    const result = run(
      withPrelude(
        {
          dirs: [home, path.join(dir, 'attachments')],
          files: [
            { path: skill, content },
            { path: odd, content: '-n' },
          ],
        },
        ['/bin/sh', '-c', 'echo started $$ "$@"', 'agent', '--flag', '--'],
      ),
      dir,
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^started \d+ --flag --\n$/);
    expect(existsSync(path.join(dir, 'attachments'))).toBe(true);
    expect(readFileSync(skill, 'utf8')).toBe(content);
    expect(readFileSync(odd, 'utf8')).toBe('-n');
    expect(existsSync(path.join(dir, 'pwned'))).toBe(false);
  });

  it('ends with 125, saying why, and starts nothing when a file cannot be written', () => {
    writeFileSync(path.join(dir, 'file'), '');
    const result = run(
      withPrelude({ dirs: [], files: [{ path: path.join(dir, 'file', 'x', 'y'), content: 'z' }] }, [
        '/bin/sh',
        '-c',
        'echo started',
      ]),
      dir,
    );
    expect(result.status).toBe(125);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('mkdir');
  });

  it('takes inline only what an argument can carry', () => {
    expect(inlinable('{"a":1}')).toBe(true);
    expect(inlinable('a\0b')).toBe(false);
    expect(inlinable('x'.repeat(MAX_INLINE_BYTES + 1))).toBe(false);
    expect(inlinable(Buffer.from('a'))).toBe(false);
  });
});
