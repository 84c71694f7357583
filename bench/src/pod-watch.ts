import { spawn, type ChildProcess } from 'node:child_process';

interface PodObject {
  metadata: { name: string };
  spec?: { nodeName?: string };
  status?: { phase?: string; containerStatuses?: Array<{ state?: { running?: unknown } }> };
}

/** When this process first saw each of a Pod's steps (epoch ms; the API's own timestamps are whole seconds). */
export interface PodSteps {
  pod_created?: number;
  pod_scheduled?: number;
  pod_started?: number;
}

/**
 * `kubectl get pods --watch` on the run Pods, each step stamped as the event arrives: Pod created (its first event),
 * scheduled (a node named), started (its container running). kubectl prints each event as a pretty-printed JSON
 * object after the other, so the stream is cut at every closing brace of the top level (a small scanner that skips
 * braces inside strings: kubectl offers no line-delimited JSON).
 */
export class PodWatch {
  private readonly steps = new Map<string, PodSteps>();

  private constructor(private readonly process: ChildProcess) {}

  static async start(kubectl: string, namespace: string, selector: string): Promise<PodWatch> {
    const child = spawn(
      kubectl,
      ['-n', namespace, 'get', 'pods', '-l', selector, '--watch', '--output-watch-events', '-o', 'json'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const watch = new PodWatch(child);
    let buffer = '';
    let depth = 0;
    let inString = false;
    let escaped = false;
    let start = 0;
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const from = buffer.length;
      buffer += chunk;
      for (let i = from; i < buffer.length; i++) {
        const c = buffer[i];
        if (inString) {
          if (escaped) escaped = false;
          else if (c === '\\') escaped = true;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === '{') {
          if (depth++ === 0) start = i;
        } else if (c === '}' && --depth === 0) {
          watch.record((JSON.parse(buffer.slice(start, i + 1)) as { object: PodObject }).object);
        }
      }
      if (depth === 0) buffer = '';
    });
    // The watch is open once kubectl has connected: give it a moment before the first run is created.
    await new Promise((r) => setTimeout(r, 1000));
    return watch;
  }

  private record(pod: PodObject): void {
    const now = Date.now();
    const steps = this.steps.get(pod.metadata.name) ?? {};
    steps.pod_created ??= now;
    if (pod.spec?.nodeName) steps.pod_scheduled ??= now;
    if (pod.status?.containerStatuses?.some((c) => c.state?.running)) steps.pod_started ??= now;
    this.steps.set(pod.metadata.name, steps);
  }

  /** The steps of the first Pod whose name starts with `prefix`. */
  seen(prefix: string): PodSteps | undefined {
    for (const [name, steps] of this.steps) if (name.startsWith(prefix)) return steps;
    return undefined;
  }

  stop(): void {
    this.process.kill();
  }
}
