import type { OrchestratorLink } from '../orchestrator-link';
import { parseRecord, type KeptRecord, type RecordStore, type RecordTarget } from './record-store';

/** Most runs one replica takes over per `take` (the orchestrator caps it at 20 too). */
const ADOPT_PER_CALL = 5;

/**
 * Adoption records in the run's lease (Kubernetes; docs/sandbox.md "Run leases"): written through `SaveRunLease`,
 * which the orchestrator seals with CONVEYOR_SECRETS_KEY (the record holds the run's gateway key and model token),
 * released to any replica on hand-over, and taken by whichever replica asks `AdoptRuns` first once released or
 * expired. The record's execution is then this replica's: it is taken back under this runner's identity.
 */
export class LeaseRecords implements RecordStore {
  constructor(
    private readonly link: Pick<OrchestratorLink, 'call'>,
    private readonly runnerId: string,
  ) {}

  async write(target: RecordTarget, json: string): Promise<void> {
    await this.link.call('SaveRunLease', { ...target, record_json: json });
  }

  /** The run's end is its lease's: the orchestrator adopts only running executions. */
  async remove(): Promise<void> {}

  async handOver(target: RecordTarget): Promise<void> {
    await this.link.call('ReleaseRunLease', target);
  }

  async take(): Promise<KeptRecord[]> {
    const { runs } = await this.link.call('AdoptRuns', { runner_id: this.runnerId, limit: ADOPT_PER_CALL });
    return runs.map((run) => ({ json: parseRecord(run.record_json), holder: this.runnerId }));
  }
}
