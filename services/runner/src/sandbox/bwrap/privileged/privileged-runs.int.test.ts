import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PrivilegedRuns } from './privileged-runs';

const LIMITS = { diskBytes: 16 * 1024 * 1024, memoryBytes: 256 * 1024 * 1024, maxProcesses: 64 };

/** The pids-hierarchy parent the helper creates its runs' groups under (v1 here; v2 keeps them in `conveyor-sandbox`). */
async function pidsParent(): Promise<string> {
  const own = await readFile('/proc/self/cgroup', 'utf8');
  const v1 = /^\d+:(?:[^:]*,)?pids(?:,[^:]*)?:(.*)$/m.exec(own)?.[1];
  if (v1 !== undefined) return path.join('/sys/fs/cgroup/pids', v1);
  const v2 = /^0::(.*)$/m.exec(own)![1]!;
  return path.join(
    v2 === '/' ? '/sys/fs/cgroup' : path.dirname(path.join('/sys/fs/cgroup', v2)),
    'conveyor-sandbox',
  );
}

/** Runs argv on the host as `uid` (and its gid, no other groups) — outside bwrap, and without no_new_privs. */
const asUid = (uid: number, argv: string[]): string =>
  execFileSync('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', ...argv], {
    encoding: 'utf8',
  }).trim();

/** The per-mount options (field 6 of /proc/self/mountinfo) of the mount at `mountPoint`. */
async function mountOptions(mountPoint: string): Promise<string[]> {
  const line = (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .find((l) => l.split(' ')[4] === mountPoint);
  return line?.split(' ')[5]?.split(',') ?? [];
}

const groupOf = async (runId: string) => {
  const parent = await pidsParent();
  const name = (await readdir(parent)).find((n) => n.startsWith('conveyor-') && n.includes(runId));
  return name && path.join(parent, name);
};

describe('the privileged helper at start', () => {
  let root: string;
  const helpers: PrivilegedRuns[] = [];

  const startHelper = async (name: string) => {
    const runs = new PrivilegedRuns(
      {
        workspaceRoot: path.join(root, name, 'workspaces'),
        stateDir: path.join(root, name, 'state'),
        readOnlyPaths: [],
        bwrapPath: execFileSync('sh', ['-c', 'command -v bwrap']).toString().trim(),
        runnerUid: 0,
        runnerGid: 0,
        snapshots: { maxAgeMs: 3_600_000, maxBytes: 1 << 30 },
      },
      () => undefined,
    );
    await runs.init();
    helpers.push(runs);
    return runs;
  };

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'privileged-runs-'));
    await chmod(root, 0o711);
  });

  afterAll(async () => {
    for (const runs of helpers) await runs.releaseAll();
    await rm(root, { recursive: true, force: true });
  });

  it("removes the empty run cgroups its crashed predecessor left, never another runner's or a group still in use", async () => {
    const crashed = await startHelper('a');
    const stale = randomUUID();
    const busy = randomUUID();
    expect((await crashed.open({ op: 'open', runId: stale, limits: LIMITS })).cgroups).toBe(true);
    await crashed.open({ op: 'open', runId: busy, limits: LIMITS });
    // A process still in one of them (what a crash could leave behind): the kernel would refuse its removal anyway.
    const sleeper = spawn('sleep', ['60']);
    await writeFile(path.join((await groupOf(busy))!, 'cgroup.procs'), String(sleeper.pid));
    // Another runner on this host (its own workspace root) with a run open whose group has no process yet.
    const other = await startHelper('b');
    const othersRun = randomUUID();
    await other.open({ op: 'open', runId: othersRun, limits: LIMITS });
    const [staleGroup, busyGroup, othersGroup] = [
      await groupOf(stale),
      await groupOf(busy),
      await groupOf(othersRun),
    ];
    expect(staleGroup && busyGroup && othersGroup).toBeTruthy();

    // The same runner starts again over the same workspace root, its predecessor never having released anything.
    helpers.splice(helpers.indexOf(crashed), 1);
    await startHelper('a');

    expect(existsSync(staleGroup!)).toBe(false);
    expect(existsSync(busyGroup!)).toBe(true);
    expect(existsSync(othersGroup!)).toBe(true);
    sleeper.kill('SIGKILL');
    await new Promise((r) => sleeper.once('exit', r));
    // Once empty, the next start removes it too.
    await startHelper('a');
    expect(existsSync(busyGroup!)).toBe(false);
  });

  it('two runs of one environment at once: one keeps its snapshot, the other neither waits nor overwrites it; a failed mount falls back to an empty disk', async () => {
    const runs = await startHelper('c');
    const ref = { teamId: 'team', key: 'b'.repeat(64) };
    const [first, second] = [randomUUID(), randomUUID()];
    for (const runId of [first, second]) await runs.open({ op: 'open', runId, limits: LIMITS });
    const made = await Promise.all([runs.capture(first, ref), runs.capture(second, ref)]);
    expect(made.filter((m) => m.snapshot).length).toBe(1);
    expect(made.filter((m) => !m.snapshot).length).toBe(1);
    const store = path.join(root, 'c', 'workspaces', '.snapshots', 'team');
    expect((await readdir(store)).sort()).toEqual([`${ref.key}.img`, `${ref.key}.uid`]);

    // A snapshot that cannot be mounted (its image is not a file system): the run gets an ordinary empty disk.
    await writeFile(path.join(store, `${ref.key}.img`), 'not ext4');
    const third = randomUUID();
    const opened = await runs.open({ op: 'open', runId: third, limits: LIMITS, snapshot: ref });
    expect(opened.snapshot).toBeUndefined();
    expect(opened.snapshotFailure).toMatch(/mount/);
    expect(await readdir(path.join(root, 'c', 'workspaces', third))).toEqual([]);
  });

  it("a setuid file planted during setup gains nothing through a later run's workspace, even outside bwrap and without no_new_privs", async () => {
    const runs = await startHelper('d');
    const workspaces = path.join(root, 'd', 'workspaces');
    const ref = { teamId: 'team', key: 'd'.repeat(64) };
    const maker = randomUUID();
    const a = (await runs.open({ op: 'open', runId: maker, limits: LIMITS })).uid;
    // What setup can plant as its own uid: a copy of `id`, setuid and setgid to itself.
    asUid(a, [
      'sh',
      '-c',
      `cd ${path.join(workspaces, maker)} && cp /usr/bin/id suid-id && chmod 6755 suid-id`,
    ]);
    expect((await runs.capture(maker, ref)).snapshot).toBeDefined();

    const later = randomUUID();
    const opened = await runs.open({ op: 'open', runId: later, limits: LIMITS, snapshot: ref });
    expect(opened.snapshot).toBeDefined();
    const b = opened.uid;
    expect(b).not.toBe(a);
    const workspace = path.join(workspaces, later);
    const planted = path.join(workspace, 'suid-id');
    // The effective uid and gid `uid` gets by executing the planted file.
    const gained = (uid: number) => ['-u', '-g'].map((flag) => asUid(uid, [planted, flag])).join(' ');
    // The later run itself never becomes the first run's uid: the idmapped snapshot shows the file as its own.
    expect(gained(b)).toBe(`${b} ${b}`);
    // The later run opens its workspace to the host (it owns it): anyone else executing the file there stays
    // themselves — the workspace's overlay is nosuid (without it this prints the run's uid).
    asUid(b, ['chmod', '755', workspace]);
    const other = 2 * 1_000_000 + 4242;
    expect(gained(other)).toBe(`${other} ${other}`);
    // Device files are not plantable without privilege; the snapshot's mounts ignore them all the same.
    const lower = path.join(workspaces, '.layers', later, 'lower');
    for (const mount of [workspace, lower])
      expect(await mountOptions(mount)).toEqual(expect.arrayContaining(['nosuid', 'nodev']));
  });
});

describe('a durable command (the agent) across helpers', () => {
  let root: string;
  const helpers: PrivilegedRuns[] = [];
  /** The runner's unprivileged account in these tests: an uid no run gets and no account has. */
  const RUNNER = 2_004_243;

  const startHelper = async () => {
    const runs = new PrivilegedRuns(
      {
        workspaceRoot: path.join(root, 'workspaces'),
        stateDir: path.join(root, 'state'),
        readOnlyPaths: [],
        bwrapPath: execFileSync('sh', ['-c', 'command -v bwrap']).toString().trim(),
        runnerUid: RUNNER,
        runnerGid: RUNNER,
        snapshots: { maxAgeMs: 3_600_000, maxBytes: 1 << 30 },
      },
      () => undefined,
    );
    await runs.init();
    helpers.push(runs);
    return runs;
  };
  const startDurable = async (runs: PrivilegedRuns, runId: string) => {
    await runs.open({ op: 'open', runId, limits: LIMITS });
    await runs.execDurable({
      op: 'exec',
      runId,
      execId: 1,
      argv: ['/bin/sh', '-c', 'cat; echo done'],
      env: {},
      cwd: '/workspace',
      forwarders: [],
      durable: true,
      input: true,
    });
  };
  const durableDir = (runId: string) => path.join(root, 'workspaces', '.durable', runId);

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'durable-runs-'));
    await chmod(root, 0o711);
  });

  afterAll(async () => {
    for (const runs of helpers) {
      await runs.releaseLeftovers([]);
      for (const runId of await readdir(path.join(root, 'workspaces', '.durable')).catch((): string[] => []))
        await runs.release(runId, false).catch(() => undefined);
    }
    await rm(root, { recursive: true, force: true });
  });

  it('outlives its helper; the next helper takes it back as it was, and the runner account cannot forge what it takes back', async () => {
    const first = await startHelper();
    const runId = randomUUID();
    const openedFrom = Date.now();
    await startDurable(first, runId);
    const openedBy = Date.now();
    await expect(first.adopt(runId)).rejects.toThrow(/already open/);
    // The runner's account reads the output and writes the input, but cannot replace the record the next helper
    // trusts (with another uid to run as, another socket directory): the directory and the record are root's.
    const forged = JSON.stringify({ uid: 1, limits: LIMITS, socketsDir: '/etc', keeper: 1 });
    expect(() =>
      asUid(RUNNER, [
        'sh',
        '-c',
        `cd ${durableDir(runId)} && rm -f record.json; echo '${forged}' > record.json`,
      ]),
    ).toThrow();

    // The helper is gone without releasing it (as when the runner is SIGKILLed); the next one takes it back.
    await first.releaseAll();
    const second = await startHelper();
    const adopted = await second.adopt(runId);
    expect(adopted.uid).toBeGreaterThanOrEqual(1_000_000);
    expect(adopted.socketsDir).not.toBe('/etc');
    // Its wall clock goes on from its first opening, not from the new helper's.
    expect(adopted.openedAt).toBeGreaterThanOrEqual(openedFrom);
    expect(adopted.openedAt).toBeLessThanOrEqual(openedBy);
    // The same process, still waiting on its input: the runner writes it, ends it, and the command finishes.
    asUid(RUNNER, ['sh', '-c', `echo hello > ${path.join(durableDir(runId), 'in.fifo')}`]);
    second.durableAction(runId, 'end-input');
    const exit = path.join(durableDir(runId), 'exit');
    while (!existsSync(exit)) await new Promise((r) => setTimeout(r, 50));
    expect((await readFile(exit, 'utf8')).trim()).toBe('0');
    expect(asUid(RUNNER, ['cat', path.join(durableDir(runId), 'out')])).toBe('hello\ndone');
    await second.release(runId, false);
    expect(existsSync(durableDir(runId))).toBe(false);
  });

  it('ends at start what the previous runner process left and the next one does not take back', async () => {
    const first = await startHelper();
    const [kept, left] = [randomUUID(), randomUUID()];
    for (const runId of [kept, left]) await startDurable(first, runId);
    const keeperOf = async (runId: string) =>
      (JSON.parse(await readFile(path.join(durableDir(runId), 'record.json'), 'utf8')) as { keeper: number })
        .keeper;
    const leftKeeper = await keeperOf(left);
    await first.releaseAll();

    const second = await startHelper();
    expect(await second.releaseLeftovers([kept])).toEqual([left]);
    expect(existsSync(`/proc/${leftKeeper}`)).toBe(false);
    expect(existsSync(durableDir(left))).toBe(false);
    expect(existsSync(path.join(root, 'workspaces', left))).toBe(false);
    expect((await second.adopt(kept)).uid).toBeGreaterThanOrEqual(1_000_000);
    await expect(second.adopt(left)).rejects.toThrow(/agent process is gone/);
  });
});
