import { randomUUID } from 'node:crypto';
import { startScriptedModelServer, type Json, type ScriptedModelServer } from '@conveyor/testing';
import { cluster, eventually, kubectl, pods, runnerMetrics } from './cluster';
import { api, MODEL, otherTeamKey, RUN_IMAGE, toolOutputs, waitForState } from './runs';

// Issue 26 on the Kubernetes backend: the runner keeps an environment's workspace after its setup as the team's
// snapshot and later runs' Pods are unpacked from it (docs/snapshots.md). The real Claude Code CLI in each run's Pod
// reports what its workspace holds through its Bash tool. Issue 36: the store is a volume both runner replicas of the
// test overlay mount (scripts/kubernetes/snapshots-volume.yaml), so a snapshot serves runs on either replica and
// outlives a runner rollout, and a later run's Pod mounts its team's archive read-only instead of having it streamed.

/**
 * Setup: a marker only this setup could write, something under HOME, a setuid copy of `id`, a link to /etc/shadow,
 * 16 MiB more than the exec stream holds unsent (the archive's copy into a Pod is paced), and a few seconds of work.
 */
const SETUP = [
  'echo "marker-$(od -An -N8 -tx8 /dev/urandom | tr -d " ")" > marker.txt',
  'mkdir -p "$HOME/.cache" && echo cached > "$HOME/.cache/setup"',
  'cp "$(command -v id)" suid-id && chmod 4755 suid-id',
  'ln -s /etc/shadow shadow',
  'head -c 16777216 /dev/urandom > blob',
  'sleep 3',
].join(' && ');

/** What the agent reports of its workspace: the marker, HOME, the setuid copy's mode and whose it runs as. */
const PROBE = [
  'cat marker.txt',
  'echo "home=$(cat "$HOME/.cache/setup")"',
  'echo "suid_mode=$(stat -c %a suid-id)"',
  'echo "ran_as=$(./suid-id -u)"',
  '(cat shadow >/dev/null 2>&1 && echo shadow=read) || echo shadow=unreadable',
  'echo "blob=$(stat -c %s blob)"',
  // The store's mount, when the run started from a snapshot: its options and what of the store it is.
  'echo "snapshot_mount=$(awk \'$5 == "/snapshot.tar" { split($6, o, ","); print o[1] }\' /proc/self/mountinfo)"',
  'echo "snapshot_source=$(awk \'$5 == "/snapshot.tar" { print $4 }\' /proc/self/mountinfo)"',
  '( (echo x >> /snapshot.tar) 2>/dev/null && echo snapshot_write=yes) || echo snapshot_write=no',
].join('; ');

type TimelineEvent = { kind: string; data: Record<string, unknown> };

/**
 * The runners' `conveyor_environment_snapshots` gauge, read inside each runner Pod (the namespace admits no one else),
 * summed: hits and misses are each replica's own since it started; count and bytes are the shared store's, the same
 * on every replica, so those are the largest any replica reports.
 */
async function snapshotMetrics(): Promise<Record<string, number>> {
  const sums: Record<string, number> = {};
  for (const text of await runnerMetrics()) {
    for (const [, stat, value] of text.matchAll(
      /^conveyor_environment_snapshots\{[^}]*stat="(\w+)"[^}]*\} (\d+)/gm,
    ))
      sums[stat!] =
        stat === 'count' || stat === 'bytes'
          ? Math.max(sums[stat!] ?? 0, Number(value))
          : (sums[stat!] ?? 0) + Number(value);
  }
  return sums;
}

describe('environment snapshots on Kubernetes: set up once, later runs of the team start from it', () => {
  let server: ScriptedModelServer;

  beforeAll(async () => {
    server = await startScriptedModelServer([], { host: cluster.nodeIp, port: cluster.modelServerPort });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A run of `environmentId` whose agent runs PROBE; what it saw and what the timeline says of setup. */
  async function probeRun(environmentId: string, key?: string) {
    server.enqueue(
      { text: 'Looking.', toolCalls: [{ name: 'Bash', input: { command: PROBE, description: 'Look' } }] },
      { text: 'Looked.' },
    );
    const created = await api(
      'POST',
      '/agent/runs',
      {
        prompt: 'Look at your workspace',
        config: { environment_id: environmentId, harness: { model_id: MODEL } },
      },
      key,
    );
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    const done = await waitForState(runId, ['SUCCEEDED', 'FAILED', 'ERROR'], 240_000, key);
    expect(done).toMatchObject({ state: 'SUCCEEDED', status_message: { message: 'Looked.' } });
    const output = (JSON.parse(await toolOutputs(runId, key)) as Json[])
      .map((step) => String(step.output ?? ''))
      .join('\n');
    const seen = Object.fromEntries(
      [...output.matchAll(/^(\w+)=(\S*)$/gm)].map(([, name, value]) => [name, value]),
    );
    const timeline = (await api('GET', `/agent/runs/${runId}/timeline`, undefined, key)).body
      .events as TimelineEvent[];
    const setup = timeline.filter((e) => e.kind === 'setup_step' && e.data.step === 'setup_commands');
    const detail = String(setup.find((e) => e.data.status === 'succeeded')?.data.detail ?? '');
    return {
      marker: /^marker-[0-9a-f]+$/m.exec(output)?.[0],
      seen,
      made: /made snapshot ([0-9a-f]{16})/.exec(detail)?.[1],
      from: /started from snapshot ([0-9a-f]{16}); setup skipped/.exec(detail)?.[1],
      ranSetup: setup.some(
        (e) => e.data.status === 'started' && !String(e.data.detail ?? '').startsWith('from snapshot'),
      ),
    };
  }

  const environment = async (key?: string): Promise<string> => {
    const created = await api(
      'POST',
      '/agent/environments',
      { name: `snapshots ${randomUUID()}`, docker_image: RUN_IMAGE, setup_commands: [SETUP] },
      key,
    );
    expect(created.status).toBe(201);
    return created.body.uid as string;
  };

  const providerKey = async (key?: string) =>
    expect(
      (await api('PUT', '/secrets/ANTHROPIC_API_KEY', { value: `sk-k8s-provider-${randomUUID()}` }, key))
        .status,
    ).toBe(200);

  let firstMarker = '';
  let snapshot = '';

  it('later runs start from the snapshot the first made, on new runner replicas after a rollout: setup skipped, its files there, no setuid bit, no shadow, the archive mounted read-only', async () => {
    await providerKey();
    const environmentId = await environment();
    const cold = await probeRun(environmentId);
    expect(cold.ranSetup).toBe(true);
    expect(cold.made).toMatch(/^[0-9a-f]{16}$/);
    expect(cold.marker).toBeDefined();
    // In the Pod setup ran in, as it left it (the bit gives nothing: no privilege escalation in a run's Pod).
    expect(cold.seen).toMatchObject({ suid_mode: '4755', ran_as: '65534', shadow: 'unreadable' });
    firstMarker = cold.marker!;
    snapshot = cold.made!;

    // In the Pod setup ran in there is no snapshot mount.
    expect(cold.seen).toMatchObject({ snapshot_mount: '', snapshot_write: 'no' });

    // A runner rollout replaces both replicas: the snapshot is on the store's volume, not in a runner Pod, so the
    // next runs — on new replicas that never saw it made — start from it, every one of them.
    const before = (await pods('app.kubernetes.io/name=conveyor-runner')).map((pod) => pod.name);
    await kubectl('rollout', 'restart', 'deployment/conveyor-runner');
    await kubectl('rollout', 'status', 'deployment/conveyor-runner', '--timeout=300s');
    const after = (await pods('app.kubernetes.io/name=conveyor-runner')).filter(
      (pod) => pod.phase === 'Running' && !pod.deleting,
    );
    expect(after.map((pod) => pod.name).filter((name) => before.includes(name))).toEqual([]);
    // `rollout status` returns while the old Pods still terminate, and in their preStop pause they still take runs:
    // the warm runs must find only the new replicas.
    await eventually(
      async () =>
        (await pods('app.kubernetes.io/name=conveyor-runner')).some((pod) => before.includes(pod.name))
          ? undefined
          : true,
      'the old runner Pods to be gone',
    );
    for (let i = 0; i < 2; i++) {
      const warm = await probeRun(environmentId);
      expect(warm.from).toBe(snapshot);
      expect(warm.ranSetup).toBe(false);
      expect(warm.made).toBeUndefined();
      expect(warm.marker).toBe(firstMarker);
      expect(warm.seen).toMatchObject({
        home: 'cached',
        // Unpacked by the run's own user: owners and setuid bits are not restored.
        suid_mode: '755',
        ran_as: '65534',
        shadow: 'unreadable',
        blob: '16777216',
        // Its team's one archive, pinned for this Pod, mounted read-only: nothing else of the store.
        snapshot_mount: 'ro',
        snapshot_write: 'no',
      });
      expect(warm.seen.snapshot_source).toMatch(/\/\.snapshots\/[A-Za-z0-9_-]+\/\.pin-run-[a-z0-9-]+\.tar/);
    }
    // The new replicas' counters: both warm runs' hits, no miss; the store holds the snapshot.
    const metrics = await snapshotMetrics();
    expect(metrics.count).toBeGreaterThanOrEqual(1);
    expect(metrics.hits).toBe(2);
    expect(metrics.misses).toBe(0);
    expect(metrics.bytes).toBeGreaterThan(16 * 1024 * 1024);
  });

  it("another team's identical environment sets up from scratch and makes a snapshot of its own", async () => {
    expect(snapshot).not.toBe('');
    const key = await otherTeamKey('Snapshots');
    await providerKey(key);
    const theirs = await probeRun(await environment(key), key);
    expect(theirs.from).toBeUndefined();
    expect(theirs.ranSetup).toBe(true);
    expect(theirs.made).toMatch(/^[0-9a-f]{16}$/);
    expect(theirs.made).not.toBe(snapshot);
    expect(theirs.marker).toBeDefined();
    expect(theirs.marker).not.toBe(firstMarker);
    expect(theirs.seen).toMatchObject({ snapshot_mount: '', snapshot_write: 'no' });
  });
});
