import type { Artifact, Run } from '@conveyor/db';
import { isCancellableType } from './cancel-run';
import type { RunUsage } from './run-usage';

/** A run as the domain shows it: its row, its artifacts in report order, its usage and the facts derived from them. */
export interface RunView {
  run: Run;
  artifacts: Artifact[];
  usage?: RunUsage;
  sandboxRunning: boolean;
  cancellable: boolean;
}

/** One page of a run listing; `nextCursor` is set only when another page follows. */
export interface RunPage {
  runs: RunView[];
  nextCursor?: string;
}

export function runView(run: Run, artifacts: Artifact[] = [], usage?: RunUsage): RunView {
  return {
    run,
    artifacts,
    usage,
    sandboxRunning: run.state === 'INPROGRESS' || run.state === 'CLAIMED',
    cancellable: isCancellableType(run),
  };
}
