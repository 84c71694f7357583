export type ReadinessCheck = () => Promise<void>;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, { ok: boolean; error?: string }>;
}

/** Readiness = not shutting down and every real dependency answers within a short deadline. */
export class Readiness {
  private stopping = false;
  private readonly checks = new Map<string, ReadinessCheck>();

  add(name: string, check: ReadinessCheck): this {
    this.checks.set(name, check);
    return this;
  }

  markStopping(): void {
    this.stopping = true;
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
    return { ready: Object.values(checks).every((c) => c.ok), checks };
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
