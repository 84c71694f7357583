import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { createLogger } from '@conveyor/logger';
import { KubernetesApiError, type ExecStatus, type KubernetesClient } from './kubernetes-api';
import { KubernetesBackend, type KubernetesBackendOptions } from './kubernetes-backend';
import { runPod, type runNetworkPolicy } from './kubernetes-objects';
import { CHECKPOINTS_DIR, PodCheckpoints } from './pod-checkpoints';
import { PodSnapshots } from './pod-snapshots';
import { RunGateway } from './run-gateway';
import { LONE_PROCESS_ROUTES } from './run-routes';
import {
  RunDetached,
  SandboxUnavailable,
  type RunSandbox,
  type SandboxPolicy,
  type SnapshotRef,
} from '../run-sandbox';
import { SnapshotStore } from '../snapshot-store';
import { fakeVolumeSnapshotApi } from '../../test-support/volume-snapshot-fakes';
import { snapshotName, VolumeSnapshots } from './volume-snapshots';

// The Pod backend over a fake of its Kubernetes port (kubernetes-api.ts): what it asks of the API and how it reads the
// answers. tests/kubernetes runs the same backend against a real cluster.

type Pod = ReturnType<typeof runPod>;
type NetworkPolicy = ReturnType<typeof runNetworkPolicy>;
type ExecScript = (
  command: string[],
  io: { stdout: Writable; stderr: Writable; stdin: Readable | null },
  onStatus: (status: ExecStatus) => void,
) => Promise<{ close(): void }>;

/** An in-memory API: objects by name, Pods Running at the second read, exec answered by `script`. */
class FakeKubernetes implements KubernetesClient {
  readonly pods = new Map<string, Pod>();
  readonly policies = new Map<string, NetworkPolicy>();
  readonly calls: string[] = [];
  readonly execs: string[][] = [];
  probeError: Error | undefined;
  createPodError: Error | undefined;
  deletePodError: Error | undefined;
  phases: Array<{ phase?: string; reason?: string }> = [{ phase: 'Pending' }, { phase: 'Running' }];
  script: ExecScript = async (_command, _io, onStatus) => {
    onStatus({ status: 'Success' });
    return { close: () => undefined };
  };

  async probe(namespace: string) {
    this.calls.push(`probe ${namespace}`);
    if (this.probeError) throw this.probeError;
  }
  async createNetworkPolicy(namespace: string, body: NetworkPolicy) {
    this.calls.push(`create networkpolicy ${namespace}/${body.metadata.name}`);
    this.policies.set(body.metadata.name, body);
  }
  async deleteNetworkPolicy(namespace: string, name: string) {
    this.calls.push(`delete networkpolicy ${namespace}/${name}`);
    this.policies.delete(name);
  }
  async createPod(namespace: string, body: Pod) {
    this.calls.push(`create pod ${namespace}/${body.metadata.name}`);
    if (this.createPodError) throw this.createPodError;
    this.pods.set(body.metadata.name, body);
  }
  async deletePod(namespace: string, name: string) {
    this.calls.push(`delete pod ${namespace}/${name}`);
    if (this.deletePodError) throw this.deletePodError;
    this.pods.delete(name);
  }
  /** The Pods whose labels match every `key=value` of the selector. */
  async listPods(_namespace: string, selector: string) {
    const wanted = selector.split(',').map((pair) => pair.split('=') as [string, string]);
    return [...this.pods.values()]
      .filter((pod) =>
        wanted.every(([key, value]) => (pod.metadata.labels as Record<string, string>)[key] === value),
      )
      .map((pod) => ({
        name: pod.metadata.name,
        labels: pod.metadata.labels,
        createdAt: 0,
        deleting: false,
      }));
  }
  async listNetworkPolicies() {
    return [];
  }
  async patchPod(namespace: string, name: string) {
    this.calls.push(`patch pod ${namespace}/${name}`);
  }
  async podPhase() {
    return this.phases.length > 1 ? this.phases.shift()! : this.phases[0]!;
  }
  /** A Pod of the map runs; `ended` overrides what is read of it (deleted, evicted). */
  ended: { deleting: boolean; phase?: string; reason?: string; message?: string } | undefined;
  async podEnd(namespace: string, name: string) {
    this.calls.push(`read pod ${namespace}/${name}`);
    if (this.ended) return this.ended;
    if (!this.pods.has(name)) throw new KubernetesApiError(404, `pods "${name}" not found`);
    return { deleting: false, phase: 'Running' };
  }
  exec(
    namespace: string,
    pod: string,
    command: string[],
    io: { stdout: Writable; stderr: Writable; stdin: Readable | null },
    onStatus: (status: ExecStatus) => void,
  ) {
    this.execs.push(command);
    return this.script(command, io, onStatus);
  }
}

const logger = createLogger({ service: 'test', level: 'silent' });
let gateway: RunGateway;
beforeAll(async () => {
  gateway = await RunGateway.listen({ host: '127.0.0.1', port: 0 }, LONE_PROCESS_ROUTES, 60_000, logger);
  OPTIONS.gateway = { server: gateway, address: `10.96.0.30:${gateway.port}` };
});
afterAll(() => gateway.close());

/** `gateway` is set once it listens (beforeAll). */
const OPTIONS: KubernetesBackendOptions = {
  namespace: 'conveyor',
  gateway: undefined as unknown as KubernetesBackendOptions['gateway'],
  runnerPod: { name: 'conveyor-runner-abc', uid: '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9' },
  runnerPodLabels: { 'app.kubernetes.io/name': 'conveyor-runner' },
  defaultImage: 'conveyor/run:1',
  cpu: { request: '1', limit: '1' },
  internalHosts: [],
  podStart: { startTimeoutMs: 30_000, unschedulableTimeoutMs: 30_000 },
  logger,
};

const policy = (overrides: Partial<SandboxPolicy> = {}): SandboxPolicy => ({
  runId: 'run_K8sUnit01',
  allowedHosts: [],
  endpoints: [{ name: 'model', target: { host: '127.0.0.1', port: 9 } }],
  limits: { wallClockMs: 60_000, maxProcesses: 64, memoryBytes: 256 * 1024 ** 2, diskBytes: 64 * 1024 ** 2 },
  ...overrides,
});

/** Reports the end after the output, on a later turn, as the exec API's websocket does. */
const later = (onStatus: (status: ExecStatus) => void, status: ExecStatus) =>
  setImmediate(() => onStatus(status));

/** The exit code cause the exec API sends with a failed command. */
const failure = (code: number): ExecStatus => ({
  status: 'Failure',
  details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
});

const adopterOf = (api: KubernetesClient) => new KubernetesBackend(OPTIONS, api);

describe('KubernetesBackend', () => {
  let api: FakeKubernetes;
  let backend: KubernetesBackend;
  const open: RunSandbox[] = [];
  const prepare = async (p = policy()) => {
    const sandbox = await backend.prepare(p);
    open.push(sandbox);
    return sandbox;
  };

  beforeEach(() => {
    api = new FakeKubernetes();
    backend = new KubernetesBackend(OPTIONS, api);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.destroy()));
  });

  describe('check', () => {
    it('reads the namespace it will create Pods in', async () => {
      await expect(backend.check()).resolves.toBeUndefined();
      expect(api.calls).toEqual(['probe conveyor']);
    });

    it('refuses to start when RBAC forbids it, saying so', async () => {
      api.probeError = new KubernetesApiError(
        403,
        'pods is forbidden: User "system:serviceaccount:conveyor:x" cannot list',
      );
      const check = backend.check();
      await expect(check).rejects.toBeInstanceOf(SandboxUnavailable);
      await expect(check).rejects.toThrow(
        /^cannot use the Kubernetes API in namespace conveyor: the runner's ServiceAccount lacks the RBAC rights .*\(HTTP 403\): pods is forbidden/,
      );
    });

    it('passes on an error without an HTTP status (a refused connection) with its message', async () => {
      api.probeError = new Error('connect ECONNREFUSED 10.96.0.1:443');
      await expect(backend.check()).rejects.toThrow(
        'cannot use the Kubernetes API in namespace conveyor: connect ECONNREFUSED 10.96.0.1:443',
      );
    });
  });

  describe('prepare', () => {
    it("creates the run's NetworkPolicy, then a locked-down Pod owned by the runner pod, and waits for it to run", async () => {
      const sandbox = await prepare(policy({ image: 'registry.example/env:2', execution: 3 }));
      const [name] = [...api.pods.keys()];
      expect(name).toMatch(/^run-runk8sunit01-[0-9a-f]{6}$/);
      expect(api.calls).toEqual([`create networkpolicy conveyor/${name}`, `create pod conveyor/${name}`]);
      const pod = api.pods.get(name!)!;
      const container = pod.spec.containers[0]!;
      expect(container.image).toBe('registry.example/env:2');
      expect(pod.spec.automountServiceAccountToken).toBe(false);
      expect(pod.spec.enableServiceLinks).toBe(false);
      expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65534 });
      expect(container.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        privileged: false,
        capabilities: { drop: ['ALL'] },
      });
      // Labelled the runner's, the run's and its execution's: what the orphan reconciler collects it by once the run
      // has ended or gone on, and what an adopter finds it by.
      expect(pod.metadata.labels).toMatchObject({
        'app.kubernetes.io/managed-by': 'conveyor-runner',
        'conveyor.dev/run-id': 'run_K8sUnit01',
        'conveyor.dev/execution': '3',
      });
      // Owned by nobody: the runner Pod's end (a rollout, a crash) must not take the run's agent with it.
      expect(pod.metadata).not.toHaveProperty('ownerReferences');
      expect(api.policies.get(name!)!.metadata).not.toHaveProperty('ownerReferences');
      // The run reaches only the runner pods' run gateway (through its Service), its endpoints there by its key.
      expect(api.policies.get(name!)!.spec.egress).toEqual([
        {
          to: [{ podSelector: { matchLabels: OPTIONS.runnerPodLabels } }],
          ports: [{ protocol: 'TCP', port: gateway.port }],
        },
      ]);
      expect(sandbox.endpointUrl('model')).toMatch(
        new RegExp(`^http://10\\.96\\.0\\.30:${gateway.port}/r/cvk_[A-Za-z0-9_-]{43}/model$`),
      );
      // The key is the sandbox's own credential, kept out of the run's events (run-workspace.ts).
      expect(sandbox.endpointUrl('model')).toContain(`/r/${sandbox.secrets![0]}/`);
      expect(sandbox.workspaceDir).toBe('/workspace');
    });

    it('runs environments without a docker_image in the default image', async () => {
      await prepare();
      expect([...api.pods.values()][0]!.spec.containers[0]!.image).toBe('conveyor/run:1');
    });

    it('holds its CPU request on the node and lets the Pod burst to a CPU limit above it', async () => {
      backend = new KubernetesBackend({ ...OPTIONS, cpu: { request: '500m', limit: '2' } }, api);
      await prepare();
      const { resources } = [...api.pods.values()][0]!.spec.containers[0]!;
      expect(resources.requests.cpu).toBe('500m');
      expect(resources.limits.cpu).toBe('2');
      // Memory stays a hard, equal request and limit: a burst borrows only CPU, which the kernel takes back.
      expect(resources.limits.memory).toBe(resources.requests.memory);
    });

    it("places the run's Pod where the operator says (nodeSelector, tolerations, priorityClassName)", async () => {
      const placement = {
        nodeSelector: { 'conveyor.dev/runs': 'true' },
        tolerations: [{ key: 'conveyor.dev/runs', operator: 'Exists', effect: 'NoSchedule' }],
        priorityClassName: 'conveyor-runs',
      };
      backend = new KubernetesBackend({ ...OPTIONS, placement }, api);
      await prepare();
      expect([...api.pods.values()][0]!.spec).toMatchObject(placement);
    });

    it('maps a Pod the API server rejects to SandboxUnavailable and deletes the NetworkPolicy it made', async () => {
      api.createPodError = new KubernetesApiError(
        422,
        'Pod "run-x" is invalid: spec.containers[0].image: Required value',
      );
      const prepared = backend.prepare(policy());
      await expect(prepared).rejects.toBeInstanceOf(SandboxUnavailable);
      await expect(prepared).rejects.toThrow(
        /^cannot start the run's pod: the API server rejected the object \(HTTP 422\): Pod "run-x" is invalid/,
      );
      expect(api.policies.size).toBe(0);
      expect(api.calls.at(-1)).toMatch(/^delete networkpolicy conveyor\/run-/);
    });

    it('maps a Pod that fails before it runs to SandboxUnavailable with its reason, and deletes it', async () => {
      api.phases = [{ phase: 'Failed', reason: 'Evicted' }];
      await expect(backend.prepare(policy())).rejects.toThrow('run pod ended before it started (Evicted)');
      expect(api.pods.size).toBe(0);
      expect(api.policies.size).toBe(0);
    });
  });

  describe('exec', () => {
    it("runs the command in the Pod's container through env -i with the proxy variables, and reports its output and exit code", async () => {
      const sandbox = await prepare();
      api.script = async (command, { stdout }, onStatus) => {
        stdout.write(`ran ${command.at(-1)}\n`);
        later(onStatus, failure(3));
        return { close: () => undefined };
      };
      const proc = sandbox.exec({ argv: ['false'], env: { PATH: '/usr/bin:/bin' } });
      let out = '';
      proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
      expect(await proc.exited).toEqual({ code: 3, signal: null });
      expect(out).toBe('ran false\n');
      const command = api.execs[0]!;
      expect(command.slice(0, 2)).toEqual(['env', '-i']);
      expect(command).toContain('PATH=/usr/bin:/bin');
      expect(command.find((a) => a.startsWith('HTTPS_PROXY='))).toMatch(
        /^HTTPS_PROXY=http:\/\/run:cvk_[A-Za-z0-9_-]{43}@10\.96\.0\.30:\d+$/,
      );
      expect(command).toContain('NO_PROXY=10.96.0.30');
      expect(command.slice(-3)).toEqual(['sh', '/workspace', 'false']);
    });

    it('ends a command whose exec cannot start with no exit code and the reason on stderr', async () => {
      const sandbox = await prepare();
      api.script = () => Promise.reject(new Error('websocket handshake refused'));
      const proc = sandbox.exec({ argv: ['true'], env: {} });
      let err = '';
      proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
      expect(await proc.exited).toEqual({ code: null, signal: null });
      expect(err).toBe('sandbox: exec failed: websocket handshake refused\n');
    });
  });

  describe('kill', () => {
    it("never rejects: not when the Pod's kill -1 fails, nor when closing the exec stream throws", async () => {
      const sandbox = await prepare();
      api.script = async (command, _io, onStatus) => {
        if (command.includes('-KILL')) throw new Error('pods "run-x" not found');
        // The run's sleep never ends by itself; the housekeeping (du at destroy) does.
        if (!command.includes('sleep')) later(onStatus, { status: 'Success' });
        return {
          close: () => {
            throw new Error('socket already closed');
          },
        };
      };
      const proc = sandbox.exec({ argv: ['sleep', '600'], env: {} });
      await expect(proc.kill()).resolves.toBeUndefined();
      expect(await proc.exited).toEqual({ code: null, signal: 'SIGKILL' });
      expect(api.execs.some((c) => c.slice(-3).join(' ') === 'kill -KILL -1')).toBe(true);
    });
  });

  describe('durable agent', () => {
    it('is launched in one exec that also reads it, and letting go of it kills nothing', async () => {
      const sandbox = await prepare();
      const sockets: string[] = [];
      api.script = async (command, io, onStatus) => {
        // The agent's line, then the stream stays open: the agent runs on in the Pod. Housekeeping (du) ends.
        if (command.includes('conveyor-agent')) io.stdout.write('{"type":"system"}\n');
        else later(onStatus, { status: 'Success' });
        return { close: () => sockets.push('closed') };
      };
      const proc = sandbox.exec({ argv: ['claude', '-p'], env: { A: '1' }, stdin: 'pipe', durable: true });
      await new Promise<void>((resolve) => proc.stdout.once('data', () => resolve()));
      expect(api.execs).toHaveLength(1);
      const [launch] = api.execs;
      // The caller's environment, then the launcher with the agent's argv after the directory and offsets.
      expect(launch!.slice(0, 3)).toEqual(['env', '-i', 'A=1']);
      expect(launch!.slice(-5)).toEqual(['/tmp/.conveyor-agent', '0', '0', 'claude', '-p']);
      // The runner hands its runs over (SIGTERM): every agent is let go of, none killed.
      backend.detach();
      await expect(proc.exited).rejects.toBeInstanceOf(RunDetached);
      expect(proc.offsets).toEqual({ stdout: '{"type":"system"}\n'.length, stderr: 0 });
      expect(sockets).toEqual(['closed']);
      expect(api.execs.some((c) => c.includes('-KILL'))).toBe(false);
    });

    it("stops serving a run taken over on this replica's gateway, and keeps serving one handed over at stop", async () => {
      // Served here: an endpoint it lacks is a 404; not served (and no other replica here): its key is unknown, 401.
      const status = async (key: string) =>
        (await fetch(`http://127.0.0.1:${gateway.port}/r/${key}/no-such-endpoint/x`)).status;
      const handedOver = await prepare();
      const takenOver = await prepare();
      api.script = async (command, io, onStatus) => {
        if (command.includes('conveyor-agent')) io.stdout.write('{"type":"system"}\n');
        else later(onStatus, { status: 'Success' });
        return { close: () => undefined };
      };
      for (const sandbox of [handedOver, takenOver]) {
        const proc = sandbox.exec({ argv: ['claude', '-p'], env: {}, stdin: 'pipe', durable: true });
        await new Promise<void>((resolve) => proc.stdout.once('data', () => resolve()));
        proc.exited.catch(() => undefined);
      }
      takenOver.detach!(true);
      handedOver.detach!();
      expect(await status(takenOver.reopenSecret!)).toBe(401);
      expect(await status(handedOver.reopenSecret!)).toBe(404);
      expect(api.execs.some((c) => c.includes('-KILL'))).toBe(false);
    });

    it('is read on from the offsets a previous holder recorded, to its exit status', async () => {
      const sandbox = await prepare();
      api.script = async (command, io, onStatus) => {
        if (command.includes('conveyor-agent')) {
          io.stdout.write('{"type":"result"}\n');
          later(onStatus, failure(3));
        } else later(onStatus, { status: 'Success' });
        return { close: () => undefined };
      };
      const proc = sandbox.attachDurable!({ stdout: 120, stderr: 7 });
      let out = '';
      proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
      expect(await proc.exited).toEqual({ code: 3, signal: null });
      expect(api.execs[0]!.slice(-3)).toEqual(['/tmp/.conveyor-agent', '120', '7']);
      expect(out).toBe('{"type":"result"}\n');
      expect(proc.offsets).toEqual({ stdout: 120 + out.length, stderr: 7 });
    });
  });

  describe('reopen (another replica adopts the run)', () => {
    const agentOnly: ExecScript = async (command, io, onStatus) => {
      if (command.includes('conveyor-agent')) io.stdout.write('{"type":"system"}\n');
      else later(onStatus, { status: 'Success' });
      return { close: () => undefined };
    };

    it("finds the run's Pod by its run label and serves the run under the key its agent holds, read on from offsets", async () => {
      const sandbox = await prepare();
      const [name] = [...api.pods.keys()];
      api.script = agentOnly;
      const proc = sandbox.exec({ argv: ['claude', '-p'], env: {}, stdin: 'pipe', durable: true });
      await new Promise<void>((resolve) => proc.stdout.once('data', () => resolve()));
      backend.detach();
      await expect(proc.exited).rejects.toBeInstanceOf(RunDetached);

      const adopter = new KubernetesBackend(OPTIONS, api);
      const reopened = await adopter.reopen({ ...policy(), reopenSecret: sandbox.reopenSecret! });
      open.push(reopened);
      expect(reopened.reopenSecret).toBe(sandbox.reopenSecret);
      // Its endpoints are reached under the same key: the agent's environment does not change.
      expect(reopened.endpointUrl('model')).toBe(sandbox.endpointUrl('model'));
      api.execs.length = 0;
      reopened.attachDurable!(proc.offsets!);
      expect(api.execs[0]!.slice(-3)).toEqual(['/tmp/.conveyor-agent', String(proc.offsets!.stdout), '0']);
      // The adopter ends the run as if it had made the Pod: Pod and NetworkPolicy go at its end.
      await reopened.destroy();
      expect(api.pods.has(name!)).toBe(false);
      expect(api.policies.has(name!)).toBe(false);
    });

    it("takes the Pod of the execution it adopts, not an earlier execution's left behind", async () => {
      const earlier = await prepare(policy({ execution: 1 }));
      const [earlierName] = [...api.pods.keys()];
      const current = await prepare(policy({ execution: 2 }));
      backend.detach();
      const reopened = await adopterOf(api).reopen(
        policy({ execution: 2, reopenSecret: current.reopenSecret! }),
      );
      open.push(reopened);
      expect(reopened.endpointUrl('model')).toBe(current.endpointUrl('model'));
      await reopened.destroy();
      expect([...api.pods.keys()]).toEqual([earlierName]);
      // With neither of its execution left, the earlier one is not taken for it.
      await expect(
        adopterOf(api).reopen(policy({ execution: 2, reopenSecret: earlier.reopenSecret! })),
      ).rejects.toThrow("the run's Pod is gone");
    });

    it('refuses without the recorded key, and never takes a Pod the runner did not make however it is labelled', async () => {
      await expect(adopterOf(api).reopen(policy())).rejects.toThrow("holds no key of the run's gateway");
      // A Pod labelled with the run's ID by someone else (not managed by the runner) is not the run's agent.
      const foreign = runPod(policy(), {
        namespace: 'conveyor',
        name: 'impostor',
        image: 'x',
        runnerPodLabels: {},
        gatewayPort: 1,
        cpu: OPTIONS.cpu,
        labels: { 'conveyor.dev/run-id': 'run_K8sUnit01' },
      });
      (foreign.metadata.labels as Record<string, string>)['app.kubernetes.io/managed-by'] = 'someone-else';
      api.pods.set('impostor', foreign);
      await expect(adopterOf(api).reopen({ ...policy(), reopenSecret: 'cvk_guess' })).rejects.toThrow(
        "the run's Pod is gone",
      );
    });
  });

  describe('destroy', () => {
    it('deletes the Pod and its NetworkPolicy and reports the disk the workspace used', async () => {
      const sandbox = await backend.prepare(policy());
      const [name] = [...api.pods.keys()];
      api.script = async (command, { stdout }, onStatus) => {
        if (command.slice(-3).join(' ') === 'du -sb /workspace') stdout.write('4096\t/workspace\n');
        later(onStatus, { status: 'Success' });
        return { close: () => undefined };
      };
      expect(await sandbox.destroy()).toEqual({ diskBytes: 4096 });
      expect(api.pods.size).toBe(0);
      expect(api.policies.size).toBe(0);
      expect(api.calls.slice(-2)).toEqual([
        `delete pod conveyor/${name}`,
        `delete networkpolicy conveyor/${name}`,
      ]);
    });

    it('still resolves, and still deletes the NetworkPolicy, when deleting the Pod fails', async () => {
      const sandbox = await backend.prepare(policy());
      api.deletePodError = new KubernetesApiError(404, 'pods "run-x" not found');
      await expect(sandbox.destroy()).resolves.toEqual({ diskBytes: 0 });
      expect(api.policies.size).toBe(0);
    });
  });

  describe("the Pod's loss", () => {
    // The agent's exec ends when Kubernetes kills the Pod's processes: exit code 137, as the kubelet's SIGKILL gives.
    const killedByKubernetes = (sandbox: RunSandbox) => {
      api.script = async (command, _io, onStatus) => {
        later(onStatus, command.includes('agent') ? failure(137) : { status: 'Success' });
        return { close: () => undefined };
      };
      return sandbox.exec({ argv: ['agent'], env: {} }).exited;
    };

    it('names a deleted Pod as why the run ended, not the exit code the agent was killed with', async () => {
      const sandbox = await prepare();
      api.ended = { deleting: true, phase: 'Running' };
      // The exit says so too: the harness throws SandboxLost and the run goes on from its last turn.
      expect(await killedByKubernetes(sandbox)).toEqual({
        code: 137,
        signal: null,
        lost: "the run's Pod was deleted",
      });
      expect(await sandbox.destroy()).toMatchObject({
        lost: "The run's Pod was deleted while the run was in progress",
      });
    });

    it('names a Pod already gone (404) as deleted', async () => {
      const sandbox = await prepare();
      api.pods.clear();
      await killedByKubernetes(sandbox);
      expect((await sandbox.destroy()).lost).toBe("The run's Pod was deleted while the run was in progress");
    });

    it("names an eviction with the kubelet's reason", async () => {
      const sandbox = await prepare();
      api.ended = {
        deleting: false,
        phase: 'Failed',
        reason: 'Evicted',
        message: 'The node was low on resource: memory.',
      };
      await killedByKubernetes(sandbox);
      expect((await sandbox.destroy()).lost).toBe(
        "The run's Pod was evicted by its node (The node was low on resource: memory.) while the run was in progress",
      );
    });

    it("leaves an agent's own failure alone while its Pod runs, and asks nothing after a success", async () => {
      const sandbox = await prepare();
      const [name] = [...api.pods.keys()];
      await killedByKubernetes(sandbox);
      expect((await sandbox.destroy()).lost).toBeUndefined();
      const again = await prepare();
      api.script = async (_command, _io, onStatus) => {
        later(onStatus, { status: 'Success' });
        return { close: () => undefined };
      };
      const reads = api.calls.filter((c) => c.startsWith('read pod')).length;
      await again.exec({ argv: ['agent'], env: {} }).exited;
      await again.destroy();
      expect(api.calls.filter((c) => c.startsWith('read pod'))).toHaveLength(reads);
      expect(api.calls).toContain(`read pod conveyor/${name}`);
    });
  });

  describe("a lost run's checkpoint (on the claim the replicas share)", () => {
    const CLAIM = 'conveyor-snapshots';
    const RUN = 'run_K8sUnit01';
    let root: string;
    let unpacked: Buffer[];
    const checkpointMounts = (pod: Pod) => ({
      volumes: pod.spec.volumes.filter((v) => v.name === 'checkpoint'),
      mounts: pod.spec.containers[0]!.volumeMounts.filter((m) => m.name === 'checkpoint'),
    });
    const lastPod = () => [...api.pods.values()].at(-1)!;
    const keep = async (runId: string, bytes: string) => {
      await mkdir(path.join(root, CHECKPOINTS_DIR, runId), { recursive: true, mode: 0o700 });
      await writeFile(path.join(root, CHECKPOINTS_DIR, runId, 'workspace.tar'), bytes, { mode: 0o600 });
    };

    beforeEach(async () => {
      root = await mkdtemp(path.join(os.tmpdir(), 'k8s-checkpoints-'));
      backend = new KubernetesBackend({ ...OPTIONS, checkpoints: new PodCheckpoints(root, CLAIM) }, api);
      unpacked = [];
      api.script = async (command, _io, onStatus) => {
        if (command.includes('--file=/checkpoint.tar')) {
          // What the kubelet would mount: the sub-path the Pod's spec names, under the claim's root.
          const mount = checkpointMounts(lastPod()).mounts[0]!;
          unpacked.push(await readFile(path.join(root, mount.subPath!)));
        }
        later(onStatus, { status: 'Success' });
        return { close: () => undefined };
      };
    });
    afterEach(async () => {
      await Promise.all(open.splice(0).map((s) => s.destroy()));
      await rm(root, { recursive: true, force: true });
    });

    it('keeps the checkpoints on the claim, where any replica finds them', () => {
      expect(backend.checkpointDir).toBe(path.join(root, CHECKPOINTS_DIR));
    });

    it("mounts the run's own archive, read-only by sub-path, into the Pod it resumes in, and unpacks it there", async () => {
      await keep(RUN, 'turn 2 of run 01');
      const resumed = await prepare(policy({ resumeFromCheckpoint: true }));
      expect(checkpointMounts(lastPod())).toEqual({
        volumes: [{ name: 'checkpoint', persistentVolumeClaim: { claimName: CLAIM, readOnly: true } }],
        mounts: [
          {
            name: 'checkpoint',
            mountPath: '/checkpoint.tar',
            subPath: `${CHECKPOINTS_DIR}/${RUN}/workspace.tar`,
            readOnly: true,
          },
        ],
      });
      await resumed.restoreCheckpoint!();
      expect(unpacked.map(String)).toEqual(['turn 2 of run 01']);
    });

    it("mounts no checkpoint into any other run's Pod: not another team's run, nor a run starting afresh", async () => {
      await keep(RUN, 'turn 2 of run 01');
      await keep('run_OtherTeam02', 'turn 1 of run 02');
      const other = await prepare(policy({ runId: 'run_OtherTeam03', resumeFromCheckpoint: true }));
      expect(checkpointMounts(lastPod())).toEqual({ volumes: [], mounts: [] });
      expect(other.restoreCheckpoint).toBeUndefined();
      const fresh = await prepare(policy());
      expect(checkpointMounts(lastPod())).toEqual({ volumes: [], mounts: [] });
      expect(fresh.restoreCheckpoint).toBeUndefined();
    });

    it("refuses a run ID that is not a plain name (`..`) and a run's directory that is a link, before any Pod exists", async () => {
      await keep(RUN, 'turn 2 of run 01');
      await symlink(path.join(root, CHECKPOINTS_DIR, RUN), path.join(root, CHECKPOINTS_DIR, 'run_Planted04'));
      const pods = api.calls.filter((c) => c.startsWith('create pod')).length;
      for (const runId of ['..', `../${CHECKPOINTS_DIR}/${RUN}`, 'run_Planted04'])
        await expect(backend.prepare(policy({ runId, resumeFromCheckpoint: true }))).rejects.toThrow(
          /^cannot start the run's pod: (malformed run ID|the checkpoint path .* is not the runner's own)/,
        );
      expect(api.calls.filter((c) => c.startsWith('create pod')).length).toBe(pods);
    });
  });

  describe('environment snapshots', () => {
    const TEAM_A: SnapshotRef = { teamId: 'team_a', key: 'a1'.repeat(32) };
    const ARCHIVE = Buffer.from('tar bytes of the workspace after setup\0\x01\x02');
    let root: string;
    let store: SnapshotStore;
    /** The archive commands the fake Pod ran: 'create', 'extract' (with what it read from stdin), 'empty'. */
    let archives: Array<{ op: string; stdin?: Buffer }>;
    let extractCode: number;
    let emptyCode: number;
    let createCode: number;
    let onMountedExtract: () => Promise<unknown>;

    const argvOf = (command: string[]) => command.slice(command.indexOf('/workspace') + 1);

    beforeEach(async () => {
      root = await mkdtemp(path.join(os.tmpdir(), 'k8s-snapshots-'));
      store = new SnapshotStore(root, { maxAgeMs: 3600_000, maxBytes: 1024 ** 3 }, 'tar');
      backend = new KubernetesBackend({ ...OPTIONS, snapshots: new PodSnapshots(store) }, api);
      await backend.check();
      archives = [];
      extractCode = 0;
      emptyCode = 0;
      createCode = 0;
      onMountedExtract = async () => undefined;
      api.script = async (command, { stdout, stdin }, onStatus) => {
        const argv = argvOf(command);
        const end = (code: number) => later(onStatus, code === 0 ? { status: 'Success' } : failure(code));
        if (argv[0] === '/bin/sh' && argv[2]!.includes('tar --create')) {
          archives.push({ op: 'create' });
          stdout.write(ARCHIVE);
          end(createCode);
        } else if (argv[0] === 'tar' && argv.includes('--file=/snapshot.tar')) {
          // The Pod's mount of the store: the sub-path its spec names, read where the kubelet would find it.
          const mount = [...api.pods.values()]
            .at(-1)!
            .spec.containers[0]!.volumeMounts.find((m) => m.name === 'snapshot');
          await onMountedExtract();
          archives.push({ op: 'extract', stdin: await readFile(path.join(root, mount!.subPath!)) });
          end(extractCode);
        } else if (argv[0] === 'tar' && argv.includes('--extract')) {
          const chunks: Buffer[] = [];
          stdin!.on('data', (d: Buffer) => chunks.push(d));
          stdin!.on('end', () => {
            archives.push({ op: 'extract', stdin: Buffer.concat(chunks) });
            end(extractCode);
          });
        } else if (argv[0] === 'find') {
          archives.push({ op: 'empty' });
          end(emptyCode);
        } else end(0);
        return { close: () => undefined };
      };
    });
    afterEach(async () => {
      await Promise.all(open.splice(0).map((s) => s.destroy()));
      await rm(root, { recursive: true, force: true });
    });

    const stored = async (teamId: string) =>
      readdir(path.join(root, '.snapshots', teamId)).catch(() => [] as string[]);
    /** A run whose archive did not unpack: workspace emptied, snapshot (and any pin) gone, setup from scratch. */
    const expectUnpackFailed = async (run: RunSandbox) => {
      expect(run.startedFrom).toBeUndefined();
      expect(run.snapshotFailure).toMatch(/^unpacking snapshot a1a1a1a1a1a1a1a1 failed/);
      expect(archives.map((a) => a.op)).toEqual(['create', 'extract', 'empty']);
      expect(await stored('team_a')).toEqual([]);
    };

    it("keeps a cold run's workspace as the team's archive after killing what setup left running, and a later run of the team starts from it", async () => {
      const cold = await prepare(policy({ snapshot: TEAM_A }));
      expect(cold.startedFrom).toBeUndefined();
      expect(archives).toEqual([]);
      expect(await cold.captureSnapshot!(TEAM_A)).toBe(TEAM_A.key.slice(0, 16));
      const [kill, pack] = api.execs.slice(-2).map(argvOf);
      expect(kill).toEqual(['kill', '-KILL', '-1']);
      expect(pack!.slice(0, 2)).toEqual(['/bin/sh', '-c']);
      expect(pack![2]).toMatch(/^find \. -mindepth 1 -maxdepth 1 .*\| tar --create --file=- /);
      const file = path.join(root, '.snapshots', 'team_a', `${TEAM_A.key}.tar`);
      expect(await readFile(file)).toEqual(ARCHIVE);

      const warm = await prepare(policy({ snapshot: TEAM_A }));
      expect(warm.startedFrom).toBe(TEAM_A.key.slice(0, 16));
      // Unpacked by the run's own user before anything else ran in its Pod, setuid bits and owners not kept.
      expect(archives.at(-1)).toEqual({ op: 'extract', stdin: ARCHIVE });
      expect(argvOf(api.execs.at(-1)!)).toEqual([
        'tar',
        '--extract',
        '--file=-',
        '--no-same-owner',
        '--no-same-permissions',
        '--directory=/workspace',
      ]);
      // A run from the snapshot never replaces it with its own workspace.
      expect(await warm.captureSnapshot!(TEAM_A)).toBeUndefined();
      expect(await backend.snapshots!.stats()).toMatchObject({ count: 1, hits: 1, misses: 1 });
    });

    it("never gives one team's snapshot to another team's run of an identical environment", async () => {
      const cold = await prepare(policy({ snapshot: TEAM_A }));
      await cold.captureSnapshot!(TEAM_A);
      const other = await prepare(policy({ snapshot: { teamId: 'team_b', key: TEAM_A.key } }));
      expect(other.startedFrom).toBeUndefined();
      expect(archives.map((a) => a.op)).toEqual(['create']);
      expect(await stored('team_b')).toEqual([]);
    });

    it('keeps nothing when archiving fails in the Pod', async () => {
      createCode = 2;
      const cold = await prepare(policy({ snapshot: TEAM_A }));
      await expect(cold.captureSnapshot!(TEAM_A)).rejects.toThrow(
        /archiving the workspace failed \(exit 2\)/,
      );
      expect(await stored('team_a')).toEqual([]);
    });

    it("keeps nothing when the archive passes the store's size limit (the bytes come from the run's own image)", async () => {
      store = new SnapshotStore(root, { maxAgeMs: 3600_000, maxBytes: ARCHIVE.length - 1 }, 'tar');
      backend = new KubernetesBackend({ ...OPTIONS, snapshots: new PodSnapshots(store) }, api);
      await backend.check();
      const cold = await prepare(policy({ snapshot: TEAM_A }));
      await expect(cold.captureSnapshot!(TEAM_A)).rejects.toThrow(/passed the snapshot store's limit/);
      expect(await stored('team_a')).toEqual([]);
    });

    it('empties the workspace and drops the snapshot when it does not unpack: the run sets up from scratch', async () => {
      await (
        await prepare(policy({ snapshot: TEAM_A }))
      ).captureSnapshot!(TEAM_A);
      extractCode = 2;
      await expectUnpackFailed(await prepare(policy({ snapshot: TEAM_A })));
    });

    it('refuses the run when a half-unpacked workspace cannot be emptied, and deletes its Pod', async () => {
      await (
        await prepare(policy({ snapshot: TEAM_A }))
      ).captureSnapshot!(TEAM_A);
      extractCode = 2;
      emptyCode = 1;
      const pods = api.pods.size;
      await expect(backend.prepare(policy({ snapshot: TEAM_A }))).rejects.toThrow(
        /^cannot start the run's pod: the workspace could not be emptied after a failed restore/,
      );
      expect(api.pods.size).toBe(pods);
    });

    it('drops the snapshot when asked (its repositories moved on)', async () => {
      const cold = await prepare(policy({ snapshot: TEAM_A }));
      await cold.captureSnapshot!(TEAM_A);
      await cold.dropSnapshot!(TEAM_A);
      expect(await stored('team_a')).toEqual([]);
      expect((await prepare(policy({ snapshot: TEAM_A }))).startedFrom).toBeUndefined();
    });

    describe('on a store the run Pods mount (SANDBOX_K8S_SNAPSHOT_CLAIM, shared by the runner replicas)', () => {
      const CLAIM = 'conveyor-snapshots';
      const snapshotVolumes = (pod: Pod) => ({
        volumes: pod.spec.volumes.filter((v) => v.name === 'snapshot'),
        mounts: pod.spec.containers[0]!.volumeMounts.filter((m) => m.name === 'snapshot'),
      });
      const lastPod = () => [...api.pods.values()].at(-1)!;

      beforeEach(async () => {
        backend = new KubernetesBackend({ ...OPTIONS, snapshots: new PodSnapshots(store, CLAIM) }, api);
        await backend.check();
        await (
          await prepare(policy({ snapshot: TEAM_A }))
        ).captureSnapshot!(TEAM_A);
      });

      it("mounts only the team's archive, read-only, and unpacks it in the Pod: no byte through the exec stream", async () => {
        const warm = await prepare(policy({ snapshot: TEAM_A }));
        expect(warm.startedFrom).toBe(TEAM_A.key.slice(0, 16));
        const pod = lastPod();
        const pin = `.snapshots/team_a/.pin-${pod.metadata.name}.tar`;
        expect(snapshotVolumes(pod)).toEqual({
          volumes: [{ name: 'snapshot', persistentVolumeClaim: { claimName: CLAIM, readOnly: true } }],
          mounts: [{ name: 'snapshot', mountPath: '/snapshot.tar', subPath: pin, readOnly: true }],
        });
        expect(argvOf(api.execs.at(-1)!)).toEqual([
          'tar',
          '--extract',
          '--file=/snapshot.tar',
          '--no-same-owner',
          '--no-same-permissions',
          '--directory=/workspace',
        ]);
        expect(archives.at(-1)).toEqual({ op: 'extract', stdin: ARCHIVE });
        // The pin goes once the Pod holds its mount; the snapshot stays.
        expect((await stored('team_a')).sort()).toEqual([`${TEAM_A.key}.tar`, `${TEAM_A.key}.uid`]);
        expect(await backend.snapshots!.stats()).toMatchObject({ count: 1, hits: 1, misses: 1 });
      });

      it('keeps the pinned archive whole for the Pod when the snapshot is evicted while it starts', async () => {
        onMountedExtract = () => store.drop(TEAM_A);
        const warm = await prepare(policy({ snapshot: TEAM_A }));
        expect(warm.startedFrom).toBe(TEAM_A.key.slice(0, 16));
        expect(archives.at(-1)).toEqual({ op: 'extract', stdin: ARCHIVE });
        expect(await stored('team_a')).toEqual([]);
      });

      it("mounts nothing into another team's run of an identical environment", async () => {
        const other = await prepare(policy({ snapshot: { teamId: 'team_b', key: TEAM_A.key } }));
        expect(other.startedFrom).toBeUndefined();
        expect(snapshotVolumes(lastPod())).toEqual({ volumes: [], mounts: [] });
      });

      it("takes a link planted in a team's store for nobody's snapshot: it could name another team's", async () => {
        const teamB = path.join(root, '.snapshots', 'team_b');
        await mkdir(teamB, { recursive: true });
        await symlink(`../team_a/${TEAM_A.key}.tar`, path.join(teamB, `${TEAM_A.key}.tar`));
        await writeFile(path.join(teamB, `${TEAM_A.key}.uid`), '65534');
        const other = await prepare(policy({ snapshot: { teamId: 'team_b', key: TEAM_A.key } }));
        expect(other.startedFrom).toBeUndefined();
        expect(snapshotVolumes(lastPod())).toEqual({ volumes: [], mounts: [] });
        expect(archives.map((a) => a.op)).toEqual(['create']);
      });

      it('refuses a team or key that is not a plain name (`..`) before any Pod exists', async () => {
        const pods = api.calls.filter((c) => c.startsWith('create pod')).length;
        for (const ref of [
          { teamId: '../team_a', key: TEAM_A.key },
          { teamId: 'team_a', key: `../team_a/${TEAM_A.key}` },
        ])
          await expect(backend.prepare(policy({ snapshot: ref }))).rejects.toThrow(
            /^cannot start the run's pod: malformed snapshot reference/,
          );
        expect(api.calls.filter((c) => c.startsWith('create pod')).length).toBe(pods);
      });

      it('drops the snapshot, empties the workspace and removes the pin when the mounted archive does not unpack', async () => {
        extractCode = 2;
        await expectUnpackFailed(await prepare(policy({ snapshot: TEAM_A })));
      });

      it('removes the pin when the Pod never starts', async () => {
        api.phases = [{ phase: 'Failed', reason: 'ErrImagePull' }];
        await expect(backend.prepare(policy({ snapshot: TEAM_A }))).rejects.toThrow(SandboxUnavailable);
        expect((await stored('team_a')).sort()).toEqual([`${TEAM_A.key}.tar`, `${TEAM_A.key}.uid`]);
      });
    });
  });

  describe('snapshots as CSI VolumeSnapshots (SANDBOX_K8S_VOLUME_SNAPSHOT_CLASS)', () => {
    const TEAM: SnapshotRef = { teamId: 'team_a', key: 'c1'.repeat(32) };
    let volumes: ReturnType<typeof fakeVolumeSnapshotApi>;
    const lastWorkspace = () =>
      [...api.pods.values()].at(-1)!.spec.volumes.find((v) => v.name === 'workspace');

    beforeEach(() => {
      volumes = fakeVolumeSnapshotApi();
      const snapshots = new VolumeSnapshots(volumes.api, {
        namespace: 'conveyor',
        snapshotClass: 'csi-snap',
      });
      backend = new KubernetesBackend({ ...OPTIONS, volumeSnapshots: snapshots }, api);
    });

    it("gives each run a claim as its workspace, snapshots it without an archive, and clones it for the team's next run", async () => {
      const cold = await prepare(policy({ snapshot: TEAM }));
      expect(cold.startedFrom).toBeUndefined();
      const [claim] = [...volumes.claims.values()];
      expect(lastWorkspace()).toEqual({
        name: 'workspace',
        persistentVolumeClaim: { claimName: claim!.metadata.name },
      });
      expect(claim!.spec.dataSource).toBeUndefined();
      expect(cold.keepsSnapshots).toBe(true);
      expect(await cold.captureSnapshot!(TEAM)).toBe(snapshotName(TEAM));
      expect(volumes.snapshots.get(snapshotName(TEAM))).toMatchObject({ source: claim!.metadata.name });
      await cold.destroy();
      expect(volumes.claims.has(claim!.metadata.name)).toBe(false);

      volumes.ready();
      api.execs.length = 0;
      const next = await prepare(policy({ snapshot: TEAM }));
      expect(next.startedFrom).toBe(snapshotName(TEAM));
      const [cloned] = [...volumes.claims.values()];
      expect(cloned!.spec.dataSource).toEqual({
        apiGroup: 'snapshot.storage.k8s.io',
        kind: 'VolumeSnapshot',
        name: snapshotName(TEAM),
      });
      // Restored by the storage: nothing was unpacked in the Pod.
      expect(api.execs.flat().some((arg) => arg.includes('tar'))).toBe(false);
      // A run from the snapshot never replaces it.
      expect(await next.captureSnapshot!(TEAM)).toBeUndefined();
    });

    it("does not clone one team's snapshot for another team's run of an identical environment", async () => {
      const cold = await prepare(policy({ snapshot: TEAM }));
      await cold.captureSnapshot!(TEAM);
      volumes.ready();
      const other = await prepare(policy({ snapshot: { teamId: 'team_b', key: TEAM.key } }));
      expect(other.startedFrom).toBeUndefined();
      expect([...volumes.claims.values()].every((c) => c.spec.dataSource === undefined)).toBe(true);
    });
  });
});
