/**
 * When an execution reached each of its phases (ms after its start), logged with its end so that the platform's
 * share of the time to the agent (claim, sandbox, workspace, setup, harness start) can be read per run
 * (bench/README.md, time-to-agent).
 */
export class RunTrace {
  readonly startedAt = Date.now();
  private readonly started = performance.now();
  private readonly marks: Record<string, number> = {};

  mark(phase: string): void {
    this.marks[phase] ??= Math.round((performance.now() - this.started) * 10) / 10;
  }

  phases(): Record<string, number> {
    return { ...this.marks };
  }
}
