import type { Logger } from '@conveyor/logger';
import { untilAcknowledged } from '../acknowledged-call';
import type { OrchestratorLink } from '../orchestrator-link';
import { parseRecord, type KeptRecord, type RecordStore, type RecordTarget } from './record-store';

/** Most runs one replica takes over per `take` (the orchestrator caps it at 20 too). */
const ADOPT_PER_CALL = 5;

/** How long each lease write is sent again while the orchestrator cannot acknowledge it (acknowledged-call.ts). */
export interface LeaseWriteBounds {
  /** A save: the run's own time limit, as for the completion it may guard. */
  saveWithinMs: number;
  /** A release at stop: what is left of the shutdown's drain; past it the lease's expiry hands the run over. */
  releaseWithinMs: number;
}

/**
 * Adoption records in the run's lease (Kubernetes; docs/sandbox.md "Run leases"): written through `SaveRunLease`,
 * which the orchestrator seals with CONVEYOR_SECRETS_KEY (the record holds the run's gateway key and model token),
 * released to any replica on hand-over, and taken by whichever replica asks `AdoptRuns` first once released or
 * expired. The record's execution is then this replica's: it is taken back under this runner's identity. Saves and
 * releases are sent until acknowledged, like the completion (docs/sandbox.md "Run leases"); a refusal (`conflict`:
 * another replica took the run over) is thrown at once.
 */
export class LeaseRecords implements RecordStore {
  constructor(
    private readonly link: Pick<OrchestratorLink, 'call'>,
    private readonly runnerId: string,
    private readonly bounds: LeaseWriteBounds,
    private readonly log: Logger,
  ) {}

  async write(target: RecordTarget, json: string): Promise<void> {
    await untilAcknowledged(
      'run lease save',
      () => this.link.call('SaveRunLease', { ...target, record_json: json }),
      { giveUpAfterMs: this.bounds.saveWithinMs },
      this.log,
    );
  }

  /** The run's end is its lease's: the orchestrator adopts only running executions. */
  async remove(): Promise<void> {}

  async handOver(target: RecordTarget): Promise<void> {
    await untilAcknowledged(
      'run lease release',
      () => this.link.call('ReleaseRunLease', target),
      { giveUpAfterMs: this.bounds.releaseWithinMs },
      this.log,
    );
  }

  async take(limit = ADOPT_PER_CALL): Promise<KeptRecord[]> {
    const { runs } = await this.link.call('AdoptRuns', {
      runner_id: this.runnerId,
      limit: Math.min(limit, ADOPT_PER_CALL),
    });
    return runs.map((run) => ({ json: parseRecord(run.record_json), holder: this.runnerId }));
  }
}
