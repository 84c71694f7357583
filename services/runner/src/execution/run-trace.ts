import { context, startSpan, type Context } from '@conveyor/tracing';

/** The span each phase mark closes: the time from the previous mark until the phase was reached. */
const PHASE_SPANS: Record<string, string> = {
  claimed: 'claim',
  model_access_open: 'model access',
  sandbox_ready: 'sandbox',
  workspace_ready: 'workspace',
  environment_ready: 'environment',
  harness_started: 'harness start',
  harness_finished: 'harness',
  after_run_done: 'after run',
  completed: 'completion',
};

/**
 * When an execution reached each of its phases (ms after its start), logged with its end so that the platform's
 * share of the time to the agent (claim, sandbox, workspace, setup, harness start) can be read per run
 * (bench/README.md, time-to-agent). With tracing on, each phase is also a span of the run's trace (children of the
 * span active when the trace was made: the runner's `run` span), from the previous mark to this one.
 */
export class RunTrace {
  readonly startedAt = Date.now();
  private readonly started = performance.now();
  private readonly marks: Record<string, number> = {};
  private last = this.started;

  constructor(
    private readonly parent: Context = context.active(),
    /** Called once when a phase is first reached (the runner's time-to-agent histogram, at `harness_started`). */
    private readonly onPhase: Partial<Record<string, () => void>> = {},
  ) {}

  mark(phase: string): void {
    if (phase in this.marks) return;
    const now = performance.now();
    this.marks[phase] = Math.round((now - this.started) * 10) / 10;
    startSpan(PHASE_SPANS[phase] ?? phase, this.parent, undefined, performance.timeOrigin + this.last).end(
      performance.timeOrigin + now,
    );
    this.last = now;
    this.onPhase[phase]?.();
  }

  phases(): Record<string, number> {
    return { ...this.marks };
  }
}
