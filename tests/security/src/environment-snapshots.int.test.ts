import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  apiCall,
  createMember,
  createTeam,
  git,
  runCli,
  seedRemote,
  startGitHttpServer,
  startPlatform,
  type GitHttpServer,
  type RunningPlatform,
} from '@conveyor/testing';

// Issue 26: environment snapshots on the local (bubblewrap) backend. The real platform and runner; a command harness
// (fixtures/shell-agent.js) runs its prompt as a shell script inside the run's sandbox and reports what it saw.
jest.setTimeout(300_000);

const AGENT = path.resolve(__dirname, '../fixtures/shell-agent.js');
// The store's limit: the eviction test's 39 MiB snapshot fits alone (with ~0.3 MiB of ext4 metadata), not beside the
// five small ones the tests before it made.
const MAX_SNAPSHOT_MB = 40;

type TimelineEvent = { kind: string; data: Record<string, unknown> };
type Report = { code: number; stdout: string; stderr: string };

const stringsIn = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : value && typeof value === 'object'
      ? Object.values(value).flatMap(stringsIn)
      : [];

describe('environment snapshots: set up once, start from it, per team, read-only to the runs on it', () => {
  let platform: RunningPlatform;
  let workspaceRoot: string;
  let gitRoot: string;
  let gitServer: GitHttpServer;

  beforeAll(async () => {
    workspaceRoot = path.join(os.tmpdir(), `conveyor-snapshots-${randomUUID()}`);
    gitRoot = await mkdtemp(path.join(os.tmpdir(), 'snapshot-repositories-'));
    // A real git server the sandbox's git reaches through the egress proxy (an operator's internal host).
    gitServer = await startGitHttpServer(gitRoot, 'pusher:unused', '127.0.0.2');
    platform = await startPlatform({
      env: {
        SANDBOX_INTERNAL_HOSTS: new URL(gitServer.url).host,
        GIT_ALLOWED_SCHEMES: 'https,http',
        EGRESS_ALLOWED_ADDRESSES: new URL(gitServer.url).host,
        RUN_SANDBOX: 'bubblewrap',
        WORKSPACE_ROOT: workspaceRoot,
        HARNESS_COMMANDS: JSON.stringify({ claude: `${process.execPath} ${AGENT}` }),
        SANDBOX_READONLY_PATHS: path.dirname(AGENT),
        RUN_DISK_MB: '64',
        SNAPSHOT_MAX_MB: String(MAX_SNAPSHOT_MB),
      },
    });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await gitServer?.close();
    await rm(gitRoot, { recursive: true, force: true });
  });

  const api = (method: string, urlPath: string, body?: unknown, key?: string) =>
    apiCall(platform, method, urlPath, body, key);

  async function environment(setupCommands: string[], key?: string, extra: object = {}): Promise<string> {
    const created = await api(
      'POST',
      '/agent/environments',
      { name: `snapshots ${randomUUID()}`, setup_commands: setupCommands, ...extra },
      key,
    );
    expect(created.status).toBe(201);
    return created.body.uid as string;
  }

  /** Runs `script` as the agent in a run of `environmentId`; its report and what the timeline says of setup. */
  async function run(environmentId: string, script: string, key?: string) {
    const created = await api(
      'POST',
      '/agent/runs',
      { prompt: script, config: { environment_id: environmentId, harness: { type: 'claude' } } },
      key,
    );
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    for (const deadline = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 200))) {
      const state = (await api('GET', `/agent/runs/${runId}`, undefined, key)).body.state as string;
      if (['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(state)) {
        const { status_message } = (await api('GET', `/agent/runs/${runId}`, undefined, key)).body;
        if (state !== 'SUCCEEDED')
          throw new Error(`run ${runId} ${state}: ${JSON.stringify(status_message)}`);
        break;
      }
      if (Date.now() > deadline) throw new Error(`run ${runId} did not end\n${platform.logs().slice(-4000)}`);
    }
    const conversation = (await api('GET', `/agent/runs/${runId}/conversation`, undefined, key)).body;
    const text = stringsIn(conversation).find((s) => s.startsWith('SHELL-REPORT '));
    expect(text).toBeDefined();
    const timeline = (await api('GET', `/agent/runs/${runId}/timeline`, undefined, key)).body
      .events as TimelineEvent[];
    const setup = timeline.find(
      (e) => e.kind === 'setup_step' && e.data.step === 'setup_commands' && e.data.status === 'succeeded',
    );
    const detail = String(setup?.data.detail ?? '');
    return {
      runId,
      report: JSON.parse(text!.slice('SHELL-REPORT '.length)) as Report,
      made: /made snapshot ([0-9a-f]{16})/.exec(detail)?.[1],
      from: /started from snapshot ([0-9a-f]{16}); setup skipped/.exec(detail)?.[1],
      // Started from a snapshot whose commits had moved: updated, and setup ran on top.
      updated: /started from snapshot ([0-9a-f]{16}); setup ran again on new commits/.exec(detail)?.[1],
      // Set up from scratch: the setup step started without a snapshot.
      ranSetup: timeline.some(
        (e) =>
          e.kind === 'setup_step' &&
          e.data.step === 'setup_commands' &&
          e.data.status === 'started' &&
          !String(e.data.detail ?? '').startsWith('from snapshot'),
      ),
    };
  }

  const snapshotMetrics = async (): Promise<Record<string, number>> => {
    const text = await (await fetch(`${platform.runnerHttpUrl}/metrics`)).text();
    return Object.fromEntries(
      [...text.matchAll(/^conveyor_environment_snapshots\{[^}]*stat="(\w+)"[^}]*\} (\d+)/gm)].map((m) => [
        m[1],
        Number(m[2]),
      ]),
    );
  };

  const SETUP =
    'echo "built $(od -An -N8 -tx8 /dev/urandom)" > built.txt && mkdir -p "$HOME/.cache" && echo cached > "$HOME/.cache/c"';
  let firstEnvironment = '';
  let firstSnapshot = '';
  let built = '';

  it('the second run of an environment starts from its snapshot: setup skipped, its files there, owned by the run', async () => {
    firstEnvironment = await environment([SETUP]);
    const probe = 'cat built.txt "$HOME/.cache/c"; stat -c %u built.txt; id -u';
    const first = await run(firstEnvironment, probe);
    expect(first.made).toBeDefined();
    expect(first.from).toBeUndefined();
    expect(first.ranSetup).toBe(true);
    firstSnapshot = first.made!;
    built = first.report.stdout.split('\n')[0]!;
    expect(built).toMatch(/^built /);

    const second = await run(firstEnvironment, probe);
    expect(second.from).toBe(firstSnapshot);
    expect(second.ranSetup).toBe(false);
    const [line, cached, owner, uid] = second.report.stdout.trim().split('\n');
    expect([line, cached]).toEqual([built, 'cached']);
    // Idmapped: the snapshot's files belong to this run's own uid, not to the run that made them.
    expect(owner).toBe(uid);
    expect((await snapshotMetrics()).hits).toBeGreaterThanOrEqual(1);
  });

  it('what a run changes on top of a snapshot stays its own: the next run sees the snapshot as it was made', async () => {
    const changer = await run(
      firstEnvironment,
      'echo changed > built.txt && rm -rf .home/.cache && echo new > extra && cat built.txt',
    );
    expect(changer.from).toBe(firstSnapshot);
    expect(changer.report.stdout.trim()).toBe('changed');
    const next = await run(
      firstEnvironment,
      'cat built.txt .home/.cache/c; test -e extra && echo extra-leaked',
    );
    expect(next.from).toBe(firstSnapshot);
    expect(next.report.stdout.trim().split('\n')).toEqual([built, 'cached']);
  });

  it('a changed setup command makes a new snapshot', async () => {
    const changed = await environment([`${SETUP} && echo v2 > version`]);
    const first = await run(changed, 'cat version');
    expect(first.made).toBeDefined();
    expect(first.made).not.toBe(firstSnapshot);
    expect(first.ranSetup).toBe(true);
  });

  it('a moved commit: the run from the snapshot fetches it and sets up again on top; the next run makes a new snapshot', async () => {
    const remote = seedRemote(gitRoot, 'acme/moving');
    const seed = `${remote.slice(0, -'.git'.length)}-seed`;
    const head = () => git(['--git-dir', remote, 'rev-parse', 'main']);
    // Each setup appends the commit it set up on: the marker is the last line, and the lines count the setups.
    const moving = await environment(['git -C repo rev-parse HEAD >> setup-log'], undefined, {
      repositories: [{ url: `${gitServer.url}/acme/moving.git`, directory: 'repo' }],
    });
    const probe = 'git -C repo rev-parse HEAD; ls repo | paste -sd " "; paste -sd " " setup-log';
    const seen = (r: Awaited<ReturnType<typeof run>>) => r.report.stdout.trim().split('\n');
    const first = head();
    const fetches = () => gitServer.requests.filter((q) => q.service === 'git-upload-pack').length;

    const maker = await run(moving, probe);
    expect([maker.ranSetup, maker.made]).toEqual([true, expect.stringMatching(/^[0-9a-f]{16}$/)]);
    expect(seen(maker)).toEqual([first, 'hello.txt', first]);

    // No new commit: the run fetches (a request to the server), finds its commit current and skips setup.
    const before = fetches();
    const current = await run(moving, probe);
    expect([current.from, current.ranSetup]).toEqual([maker.made, false]);
    expect(seen(current)).toEqual([first, 'hello.txt', first]);
    expect(fetches()).toBeGreaterThan(before);

    await writeFile(path.join(seed, 'new.txt'), 'new\n');
    git(['add', 'new.txt'], seed);
    git(
      ['-c', 'user.name=Seed', '-c', 'user.email=seed@example.com', 'commit', '--quiet', '-m', 'new'],
      seed,
    );
    git(['push', '--quiet', remote, 'main'], seed);
    const second = head();
    expect(second).not.toBe(first);

    // Moved: reset to the new commit, setup again on top of the snapshot's (its line, then this run's).
    const updated = await run(moving, probe);
    expect([updated.updated, updated.from, updated.made, updated.ranSetup]).toEqual([
      maker.made,
      undefined,
      undefined,
      false,
    ]);
    expect(seen(updated)).toEqual([second, 'hello.txt new.txt', `${first} ${second}`]);

    // That run dropped the snapshot: the next sets up from scratch on the new commit and keeps that (the same key:
    // commits are not in it), and the one after starts from it — one setup line, the new commit's.
    const remade = await run(moving, probe);
    expect([remade.ranSetup, remade.from, remade.made]).toEqual([true, undefined, maker.made]);
    expect(seen(remade)).toEqual([second, 'hello.txt new.txt', second]);
    const fromNew = await run(moving, probe);
    expect([fromNew.from, fromNew.ranSetup]).toEqual([maker.made, false]);
    expect(seen(fromNew)).toEqual([second, 'hello.txt new.txt', second]);
  });

  it('a setup that commits in its repository has not moved it: with no new commit the next run skips setup', async () => {
    seedRemote(gitRoot, 'acme/patched');
    const patched = await environment(
      [
        'cd repo && git tag base && echo patched > patch.txt && git add patch.txt && git -c user.name=Setup -c user.email=setup@example.com commit --quiet -m patch',
      ],
      undefined,
      { repositories: [{ url: `${gitServer.url}/acme/patched.git`, directory: 'repo', ref: 'main' }] },
    );
    const probe = 'git -C repo log --format=%s | paste -sd " "';
    const maker = await run(patched, probe);
    expect([maker.ranSetup, maker.report.stdout.trim()]).toEqual([true, 'patch initial']);
    const later = await run(patched, probe);
    expect([later.from, later.updated, later.ranSetup]).toEqual([maker.made, undefined, false]);
    expect(later.report.stdout.trim()).toBe('patch initial');
  });

  it("another team's run of an identical environment neither uses nor sees the first team's snapshot", async () => {
    const team = JSON.parse(
      await runCli(['team', 'create', '--name', `Other ${Date.now()}`], platform.env),
    ) as {
      id: string;
    };
    const user = JSON.parse(
      await runCli(
        ['user', 'create', '--team', team.id, '--email', `snap-${Date.now()}@security.test`],
        platform.env,
      ),
    ) as { id: string };
    const key = (
      JSON.parse(await runCli(['key', 'create', '--user', user.id], platform.env)) as { key: string }
    ).key;
    const theirs = await environment([SETUP], key);
    const other = await run(theirs, 'cat built.txt', key);
    expect(other.from).toBeUndefined();
    expect(other.ranSetup).toBe(true);
    expect(other.made).toBeDefined();
    expect(other.made).not.toBe(firstSnapshot);
    expect(other.report.stdout.trim()).not.toBe(built);
  });

  it("the environment's snapshot state in the API is the caller's team's: ready once made, a guest team's its own, failed with setup", async () => {
    const stateOf = async (uid: string, key?: string) => {
      const env = await api('GET', `/agent/environments/${uid}`, undefined, key);
      expect(env.status).toBe(200);
      return env.body.snapshot as Record<string, unknown>;
    };
    // Its own setup command: snapshots are keyed by configuration, and the tests above made SETUP's.
    const shared = await environment([`${SETUP} && echo state > state`]);
    expect(await stateOf(shared)).toEqual({
      state: 'none',
      snapshot_id: null,
      updated_at: null,
      run_id: null,
    });
    const maker = await run(shared, 'true');
    expect(maker.made).toBeDefined();
    expect(await stateOf(shared)).toMatchObject({
      state: 'ready',
      snapshot_id: maker.made,
      run_id: maker.runId,
    });

    // A user of another team, a guest of the environment by consent (docs/guests.md): their runs keep their own.
    const guestEmail = `snapshot-guest-${randomUUID()}@security.test`;
    const guest = await createMember(platform, {
      teamId: await createTeam(platform),
      role: 'ADMIN',
      email: guestEmail,
    });
    const invited = await api('POST', `/agent/environments/${shared}/guests`, { email: guestEmail });
    expect(invited.status).toBe(202);
    const accepted = await api(
      'POST',
      `/agent/environment-invitations/${String(invited.body.invitation_id)}/accept`,
      undefined,
      guest.key,
    );
    expect(accepted.status).toBe(200);
    expect(await stateOf(shared, guest.key)).toMatchObject({ state: 'none', run_id: null });
    const guestRun = await run(shared, 'true', guest.key);
    expect(guestRun.made).toBeDefined();
    expect(guestRun.made).not.toBe(maker.made);
    expect(await stateOf(shared, guest.key)).toMatchObject({
      state: 'ready',
      snapshot_id: guestRun.made,
      run_id: guestRun.runId,
    });
    // The owner's team still sees its own: nothing of the guest's run.
    expect(await stateOf(shared)).toMatchObject({ snapshot_id: maker.made, run_id: maker.runId });

    const broken = await environment(['exit 3']);
    const failing = await api('POST', '/agent/runs', {
      prompt: 'true',
      config: { environment_id: broken, harness: { type: 'claude' } },
    });
    expect(failing.status).toBe(200);
    let state = '';
    while (!['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(state)) {
      await new Promise((r) => setTimeout(r, 200));
      state = (await api('GET', `/agent/runs/${String(failing.body.run_id)}`)).body.state as string;
    }
    expect(state).toBe('FAILED');
    expect(await stateOf(broken)).toMatchObject({ state: 'failed', run_id: failing.body.run_id });
  });

  it('a snapshot planted with setuid files and links gives a later run nothing: nosuid, nodev, no host path', async () => {
    const planted = await environment([
      'cp /usr/bin/id ./suid-id && chmod 6755 ./suid-id && ln -s /etc/shadow shadow && ln suid-id hard-id && ln -s / root-link',
    ]);
    const probe = [
      'stat -c "%a %u" suid-id hard-id',
      './suid-id -u; ./hard-id -u',
      'cat shadow 2>/dev/null || echo no-shadow',
      'ls root-link/ | tr "\\n" " "; echo',
      'grep " /workspace " /proc/self/mountinfo',
    ].join('; ');
    const maker = await run(planted, probe);
    expect(maker.made).toBeDefined();
    const later = await run(planted, probe);
    expect(later.from).toBe(maker.made);
    const [modes, , euid, , shadow, rootList, mount] = later.report.stdout.trim().split('\n');
    const uid = modes!.split(' ')[1]!;
    // The setuid bits were kept, but they name the run's own uid, and the mount ignores them anyway.
    expect(euid).toBe(uid);
    expect(shadow).toBe('no-shadow');
    // `/` inside is the sandbox's own root: the host's /root, /home or the snapshot store are not there.
    expect(rootList).not.toMatch(/\broot\b|\bhome\b|\.snapshots/);
    expect(mount).toMatch(/[ ,]nosuid[ ,]/);
    expect(mount).toMatch(/[ ,]nodev[ ,]/);
    // And on the host, what the store holds is root's alone.
    const store = path.join(workspaceRoot, '.snapshots');
    expect((await stat(store)).mode & 0o777).toBe(0o700);
  });

  it('a snapshot holds nothing of the run that made it: setup of an environment that keeps snapshots runs without its key and ID', async () => {
    const dumping = await environment(['env > setup-env.txt']);
    // What setup saw of the run's key and ID, then whether the agent itself has its ID.
    const probe =
      'grep -c -e "^CONVEYOR_API_KEY=." -e "^CONVEYOR_RUN_ID=." setup-env.txt; echo "${CONVEYOR_RUN_ID:+agent-has-id}"';
    const maker = await run(dumping, probe);
    expect(maker.made).toBeDefined();
    expect(maker.report.stdout.trim().split('\n')).toEqual(['0', 'agent-has-id']);
    const later = await run(dumping, probe);
    expect(later.from).toBe(maker.made);
    expect(later.report.stdout.trim().split('\n')).toEqual(['0', 'agent-has-id']);
  });

  it('an environment with `snapshot: false` neither makes nor uses one', async () => {
    const optedOut = await environment([SETUP], undefined, { snapshot: false });
    for (let i = 0; i < 2; i++) {
      const r = await run(optedOut, 'cat built.txt');
      expect([r.made, r.from, r.ranSetup]).toEqual([undefined, undefined, true]);
    }
  });

  it(`evicts the least recently used snapshots past SNAPSHOT_MAX_MB (${MAX_SNAPSHOT_MB})`, async () => {
    const before = await snapshotMetrics();
    const big = await environment(['head -c 39M /dev/urandom > blob']);
    const maker = await run(big, 'ls -s blob');
    expect(maker.made).toBeDefined();
    const after = await snapshotMetrics();
    expect(after.evictions).toBeGreaterThan(before.evictions!);
    expect(after.bytes).toBeLessThanOrEqual(MAX_SNAPSHOT_MB * 1024 * 1024);
    // The first environment's snapshot was the least recently used: its next run sets up again.
    const again = await run(firstEnvironment, 'cat built.txt');
    expect(again.from).toBeUndefined();
    expect(again.ranSetup).toBe(true);
    const teams = await readdir(path.join(workspaceRoot, '.snapshots'));
    expect(teams.length).toBeGreaterThanOrEqual(1);
  });
});
