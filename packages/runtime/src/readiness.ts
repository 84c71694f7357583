import type { LoopHealth } from './background-loop';

export type ReadinessCheck = () => Promise<void>;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, { ok: boolean; error?: string }>;
  /** Background loops' health: reported, not gating (a loop failing on a bug must not take the service out). */
  loops?: Record<string, LoopHealth>;
}

/** Readiness = not shutting down and every real dependency answers within a short deadline. */
export class Readiness {
  private stopping = false;
  private readonly checks = new Map<string, ReadinessCheck>();
  private readonly loops = new Map<string, () => LoopHealth>();

  add(name: string, check: ReadinessCheck): this {
    this.checks.set(name, check);
    return this;
  }

  /** Reports a background loop's health beside the checks. */
  observe(name: string, loop: { health(): LoopHealth }): this {
    this.loops.set(name, () => loop.health());
    return this;
  }

  markStopping(): void {
    this.stopping = true;
  }

  isStopping(): boolean {
    return this.stopping;
  }

  async report(timeoutMs = 2000): Promise<ReadinessReport> {
    const checks: ReadinessReport['checks'] = {};
    await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        try {
          await withTimeout(check(), timeoutMs, `${name} check timed out`);
          checks[name] = { ok: true };
        } catch (err) {
          checks[name] = { ok: false, error: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
    if (this.stopping) checks.shutdown = { ok: false, error: 'shutting down' };
    const ready = Object.values(checks).every((c) => c.ok);
    if (this.loops.size === 0) return { ready, checks };
    return {
      ready,
      checks,
      loops: Object.fromEntries([...this.loops].map(([name, health]) => [name, health()])),
    };
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
