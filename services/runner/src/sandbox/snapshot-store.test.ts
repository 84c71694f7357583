import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SnapshotStore } from './snapshot-store';

// The store as the Kubernetes runner replicas share it (docs/snapshots.md): one replica's start must not take away
// what another is writing or has pinned for a starting Pod.

describe('SnapshotStore shared by runner replicas', () => {
  let root: string;
  let teamDir: string;
  const store = () => new SnapshotStore(root, { maxAgeMs: 3600_000, maxBytes: 1024 ** 3 }, 'tar');

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'snapshot-store-'));
    teamDir = path.join(root, '.snapshots', 'team_a');
    await mkdir(teamDir, { recursive: true });
    await writeFile(path.join(teamDir, '.tmp-capture'), 'half an archive');
    await writeFile(path.join(teamDir, '.pin-run-x-abc123.tar'), 'an archive a Pod is about to mount');
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await rm(root, { recursive: true, force: true });
  });

  it("leaves another replica's capture in progress and its pins alone at start", async () => {
    await store().init();
    expect((await readdir(teamDir)).sort()).toEqual(['.pin-run-x-abc123.tar', '.tmp-capture']);
  });

  it('removes what a stopped runner left behind, once it is hours old', async () => {
    const now = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(now + 3 * 3600_000);
    await store().init();
    expect(await readdir(teamDir)).toEqual([]);
  });

  it("pins only under a Pod's own plain name", async () => {
    await expect(store().pin({ teamId: 'team_a', key: 'a'.repeat(64) }, '../x')).rejects.toThrow(
      /malformed snapshot holder/,
    );
  });
});
