import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Json } from '@conveyor/testing';

const run = promisify(execFile);

/** A setting scripts/kubernetes/test.sh passes in; the suite only runs against the cluster it deployed. */
function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this suite with npm run test:kubernetes`);
  return value;
}

/** The deployed platform as the suite reaches it: the gateway's and the ingress's Services, the seeded key. */
export const cluster = {
  apiUrl: `${setting('CONVEYOR_K8S_GATEWAY_URL')}/v1`,
  ingressUrl: setting('CONVEYOR_K8S_INGRESS_URL'),
  apiKey: setting('CONVEYOR_K8S_API_KEY'),
  namespace: setting('CONVEYOR_K8S_NAMESPACE'),
  /** The node's address, where the host's servers (and the scripted model server) listen for Pods. */
  nodeIp: setting('CONVEYOR_K8S_NODE_IP'),
  modelServerPort: Number(setting('CONVEYOR_K8S_MODEL_SERVER_PORT')),
  /** host:port of PostgreSQL, Redis and Kafka as Pods reach them. */
  infra: {
    postgres: setting('CONVEYOR_K8S_POSTGRES'),
    redis: setting('CONVEYOR_K8S_REDIS'),
    kafka: setting('CONVEYOR_K8S_KAFKA'),
  },
  logs: () => '',
};

export async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(
    process.env.KUBECTL ?? 'kubectl',
    ['--kubeconfig', setting('KUBECONFIG'), '-n', cluster.namespace, ...args],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return stdout;
}

export interface PodInfo {
  name: string;
  phase: string;
  ip: string;
  image: string;
  deleting: boolean;
}

export async function pods(selector: string): Promise<PodInfo[]> {
  const list = JSON.parse(await kubectl('get', 'pods', '-l', selector, '-o', 'json')) as { items: Json[] };
  return list.items.map((pod) => {
    const metadata = pod.metadata as Json;
    const status = pod.status as Json;
    const containers = (pod.spec as Json).containers as Json[];
    return {
      name: metadata.name as string,
      phase: status.phase as string,
      ip: (status.podIP as string) ?? '',
      image: containers[0]!.image as string,
      deleting: metadata.deletionTimestamp !== undefined,
    };
  });
}

/** The sandbox Pods of one run: the runner names them after the run (services/runner/src/sandbox). */
export async function runPods(runId: string): Promise<PodInfo[]> {
  const prefix = `run-${runId
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '')
    .slice(0, 40)}-`;
  return (await pods('conveyor.dev/run-sandbox')).filter((p) => p.name.startsWith(prefix));
}

/** Where every runner replica mounts the snapshot claim (WORKSPACE_ROOT in k8s/chart/templates/runner.yaml). */
export const CLAIM_ROOT = '/workspaces';

/** Reads a file on the claim from inside a runner replica (the namespace admits no one else). */
export async function onClaim(file: string): Promise<string | undefined> {
  const runner = (await pods('app.kubernetes.io/name=conveyor-runner')).find(
    (pod) => pod.phase === 'Running' && !pod.deleting,
  );
  if (!runner) return undefined;
  return kubectl('exec', runner.name, '--', 'cat', `${CLAIM_ROOT}/${file}`).catch(() => undefined);
}

/** The run's last turn's checkpoint record on the claim once it holds turn 1 or later (pod-checkpoints.ts). */
export async function turnCheckpoint(
  runId: string,
): Promise<{ turn: number; bytes: number; takenAt: number } | undefined> {
  const text = await onClaim(`.checkpoints/${runId}/checkpoint.json`);
  const record = text ? (JSON.parse(text) as { turn: number; bytes: number; takenAt: number }) : undefined;
  return record && record.turn >= 1 ? record : undefined;
}

/** When `pod`'s log first names `text` at or after `after` (the kubelet's timestamps, epoch ms), or undefined. */
export async function firstLoggedAt(pod: string, text: string, after: number): Promise<number | undefined> {
  const log = await kubectl('logs', pod, '--timestamps');
  return log
    .split('\n')
    .filter((line) => line.includes(text))
    .map((line) => Date.parse(line.slice(0, line.indexOf(' '))))
    .find((at) => at >= after);
}

/** Polls `probe` until it returns a value; fails naming `what` after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  what: string | (() => string),
  timeoutMs = 180_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Each running runner replica's own `/metrics` text, read inside its Pod (the namespace admits no one else). */
export async function runnerMetrics(): Promise<string[]> {
  const runners = (await pods('app.kubernetes.io/name=conveyor-runner')).filter(
    (pod) => pod.phase === 'Running' && !pod.deleting,
  );
  const texts: string[] = [];
  for (const runner of runners)
    texts.push(
      await kubectl(
        'exec',
        runner.name,
        '--',
        'node',
        '-e',
        "fetch('http://127.0.0.1:8082/metrics').then((r) => r.text()).then((t) => process.stdout.write(t))",
      ),
    );
  return texts;
}

const RUNNER_PODS = 'app.kubernetes.io/name=conveyor-runner';

/** The runner Deployment with `env` set (a value) or removed (undefined), its old Pods gone. */
export async function setRunner(name: string, value: string | undefined): Promise<void> {
  const before = (await pods(RUNNER_PODS)).map((pod) => pod.name);
  await kubectl(
    'set',
    'env',
    'deployment/conveyor-runner',
    value === undefined ? `${name}-` : `${name}=${value}`,
  );
  await kubectl('rollout', 'status', 'deployment/conveyor-runner', '--timeout=300s');
  // Old replicas still claim runs in their preStop pause: the runs must find only the new ones.
  await eventually(
    async () => ((await pods(RUNNER_PODS)).some((pod) => before.includes(pod.name)) ? undefined : true),
    'the old runner Pods to be gone',
  );
}
