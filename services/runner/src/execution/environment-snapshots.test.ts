import { environmentSchema } from '../environment-setup';
import { SetupFailure } from '../harness/harness';
import type { RunSandbox, SnapshotRef } from '../sandbox/run-sandbox';
import { fakeSandbox } from '../test-support/execution-fakes';
import { setUpWithSnapshot, snapshotRef } from './environment-snapshots';

const spec = (extra: object = {}) =>
  environmentSchema.parse({
    repositories: [{ url: 'https://git.example/acme/app.git', ref: 'main' }],
    setup_commands: ['npm ci'],
    ...extra,
  });

describe('snapshotRef', () => {
  it('keys a snapshot by team and by everything that decides what setup produces', () => {
    const base = snapshotRef('team-a', spec(), false)!.key;
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    expect(snapshotRef('team-a', spec(), false)!.key).toBe(base);
    for (const changed of [
      snapshotRef('team-b', spec(), false),
      snapshotRef('team-a', spec({ setup_commands: ['npm install'] }), false),
      snapshotRef('team-a', spec({ repositories: [{ url: 'https://git.example/acme/app.git' }] }), false),
      snapshotRef('team-a', spec({ docker_image: 'node:22' }), false),
      snapshotRef('team-a', spec({ allowed_hosts: ['registry.npmjs.org'] }), false),
    ])
      expect(changed!.key).not.toBe(base);
  });

  it('is none for debug sessions, environments that opt out, with a repository the platform clones, and with nothing to set up', () => {
    expect(snapshotRef('team-a', spec(), true)).toBeUndefined();
    const platformCloned = [{ url: 'https://github.com/acme/private.git', clone: 'platform' }];
    expect(snapshotRef('team-a', spec({ repositories: platformCloned }), false)).toBeUndefined();
    expect(snapshotRef('team-a', spec({ snapshot: false }), false)).toBeUndefined();
    expect(snapshotRef('team-a', environmentSchema.parse({}), false)).toBeUndefined();
  });
});

describe('setUpWithSnapshot', () => {
  const ref = { teamId: 'team-a', key: 'k'.repeat(64) };
  const runEnv = { CONVEYOR_API_KEY: 'ck_live', CONVEYOR_RUN_ID: 'run-1', HOME: '/home/run' };

  /** A sandbox that started from snapshot `startedFrom` (or empty) whose refresh script exits `refresh`. */
  function prepared(
    startedFrom: string | undefined,
    refresh = 0,
    capture: () => Promise<string | undefined> = async () => 'snap-new',
    setupExit = 0,
  ) {
    const { sandbox: base, commands } = fakeSandbox({
      exitCode: (argv) => (argv[2]?.includes('git fetch') ? refresh : argv[2] === 'npm ci' ? setupExit : 0),
    });
    const dropped: SnapshotRef[] = [];
    const captured: SnapshotRef[] = [];
    const envs: Array<Record<string, string>> = [];
    const sandbox: RunSandbox = {
      ...base,
      startedFrom,
      keepsSnapshots: true,
      exec: (options) => {
        envs.push(options.env);
        return base.exec(options);
      },
      dropSnapshot: async (r) => void dropped.push(r),
      captureSnapshot: async (r) => (captured.push(r), capture()),
    };
    const steps: Array<[string, string | undefined]> = [];
    const states: Array<[string, string | undefined]> = [];
    const run = () =>
      setUpWithSnapshot({
        environment: spec(),
        sandbox,
        ref,
        capturable: true,
        env: runEnv,
        signal: new AbortController().signal,
        step: (status, detail) => void steps.push([status, detail]),
        snapshot: (state, id) => void states.push([state, id]),
        log: () => undefined,
      });
    const setupRan = () => commands.some((argv) => argv[2] === 'npm ci');
    return { run, dropped, captured, steps, states, envs, setupRan };
  }

  it('from a current snapshot: fetches, skips setup, keeps the snapshot', async () => {
    const s = prepared('snap-1', 0);
    await s.run();
    expect(s.setupRan()).toBe(false);
    expect(s.dropped).toEqual([]);
    expect(s.steps.at(-1)).toEqual(['succeeded', 'started from snapshot snap-1; setup skipped']);
    expect(s.states).toEqual([['ready', 'snap-1']]);
  });

  it('when a commit moved: drops the snapshot and runs setup again without the run key or ID', async () => {
    const s = prepared('snap-1', 10);
    await s.run();
    expect(s.dropped).toEqual([ref]);
    expect(s.setupRan()).toBe(true);
    expect(s.envs.at(-1)).toMatchObject({ CONVEYOR_API_KEY: '', CONVEYOR_RUN_ID: '', HOME: '/home/run' });
    expect(s.steps.at(-1)?.[1]).toContain('setup ran again on new commits');
    expect(s.states).toEqual([['none', undefined]]);
  });

  it('when the snapshot clone cannot be fetched: drops it, so only this run fails', async () => {
    const s = prepared('snap-1', 2);
    await expect(s.run()).rejects.toThrow(
      expect.objectContaining({ message: expect.stringMatching(/snapshot snap-1 dropped/) }),
    );
    await expect(s.run()).rejects.toBeInstanceOf(SetupFailure);
    expect(s.dropped).toEqual([ref, ref]);
    expect(s.setupRan()).toBe(false);
  });

  it('cold: sets up without the run key or ID and keeps the result as the snapshot', async () => {
    const s = prepared(undefined);
    await s.run();
    expect(s.setupRan()).toBe(true);
    expect(s.envs.every((e) => e.CONVEYOR_API_KEY === '' && e.CONVEYOR_RUN_ID === '')).toBe(true);
    expect(s.captured).toEqual([ref]);
    expect(s.steps.at(-1)).toEqual(['succeeded', 'made snapshot snap-new']);
    expect(s.states).toEqual([
      ['building', undefined],
      ['ready', 'snap-new'],
    ]);
  });

  it('reports a snapshot that could not be made, or whose setup failed, as failed', async () => {
    const refused = prepared(undefined, 0, () => Promise.reject(new Error('disk full')));
    await refused.run();
    expect(refused.states).toEqual([
      ['building', undefined],
      ['failed', undefined],
    ]);
    const broken = prepared(undefined, 0, undefined, 1);
    await expect(broken.run()).rejects.toBeInstanceOf(SetupFailure);
    expect(broken.captured).toEqual([]);
    expect(broken.states).toEqual([
      ['building', undefined],
      ['failed', undefined],
    ]);
  });
});
