import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@conveyor/logger';
import { UnsandboxedBackend } from './sandbox/unsandboxed-backend';
import { collectWorkspacePatch } from './workspace-changes';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x.dev', ...args], { cwd }).toString();

describe('workspace changes as a patch, computed in the sandbox', () => {
  let workspace: string;

  beforeEach(async () => {
    workspace = await mkdtemp(path.join(os.tmpdir(), 'patch-'));
    const origin = path.join(workspace, 'origin');
    execFileSync('git', ['init', '-q', '-b', 'main', origin]);
    await writeFile(path.join(origin, 'a.txt'), 'one\n');
    git(origin, 'add', '-A');
    git(origin, 'commit', '-qm', 'init');
    git(workspace, 'clone', '-q', origin, 'repo');
  });

  const collect = async () => {
    const sandbox = await new UnsandboxedBackend(
      createLogger({ service: 'test', level: 'silent' }),
      path.dirname(workspace),
      true,
    ).prepare({
      runId: path.basename(workspace),
      allowedHosts: [],
      endpoints: [],
      limits: { wallClockMs: 60_000, maxProcesses: 64, memoryBytes: 1 << 30, diskBytes: 1 << 30 },
    });
    try {
      return await collectWorkspacePatch(sandbox, { PATH: '/usr/bin:/bin', HOME: workspace }, [
        'repo',
        'missing',
      ]);
    } finally {
      await sandbox.destroy({ keepWorkspace: true });
    }
  };

  it('says nothing changed when nothing did', async () => {
    expect(await collect()).toEqual({ patch: Buffer.alloc(0), files: 0 });
  });

  it('holds committed, unstaged and untracked changes since the upstream branch, and leaves the index alone', async () => {
    const repo = path.join(workspace, 'repo');
    await writeFile(path.join(repo, 'a.txt'), 'one\ntwo\n');
    git(repo, 'commit', '-qam', 'agent commit');
    await writeFile(path.join(repo, 'a.txt'), 'one\ntwo\nthree\n');
    await writeFile(path.join(repo, 'new.txt'), 'fresh\n');
    const indexBefore = await readFile(path.join(repo, '.git', 'index'));

    const changes = await collect();
    if ('tooLarge' in changes) throw new Error('unexpected');
    expect(changes.files).toBe(2);
    const patch = changes.patch.toString();
    expect(patch).toContain('diff --git a/repo/a.txt b/repo/a.txt');
    expect(patch).toContain('+two\n+three\n');
    expect(patch).toContain('diff --git a/repo/new.txt b/repo/new.txt');
    expect(await readFile(path.join(repo, '.git', 'index'))).toEqual(indexBefore);

    // The patch applies to the repository as cloned.
    const fresh = path.join(workspace, 'fresh');
    git(workspace, 'clone', '-q', path.join(workspace, 'origin'), 'fresh');
    execFileSync('git', ['apply', '-p2', '-'], { cwd: fresh, input: changes.patch });
    expect(await readFile(path.join(fresh, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
  });
});
