import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Logger } from '@conveyor/logger';
import { AdoptionRecords } from './execution/adoption-records';
import { LeaseRecords, type LeaseWriteBounds } from './execution/lease-records';
import { RecordFiles } from './execution/record-files';
import type { OrchestratorLink } from './orchestrator-link';
import { TurnCheckpoints } from './execution/turn-checkpoints';
import type { RunExecutor } from './run-executor';
import type { SandboxBackend } from './sandbox/run-sandbox';

const rootKey = (workspaceRoot: string) =>
  createHash('sha256').update(path.resolve(workspaceRoot)).digest('hex').slice(0, 12);

/**
 * What outlives a runner (or self-hosted worker) process: the records of executions whose agents run durable, and
 * each run's last turn. Only a backend that can reopen a run's sandbox keeps its agents apart from the process, and
 * the same backends report an agent lost with its sandbox, whose run goes on from a turn. Both are this workspace
 * root's (its runs' file systems live there): another process sharing the state directory has its own. A backend
 * may keep checkpoints elsewhere (`checkpointDir`: on Kubernetes, the claim the replicas share). With `leases` (a pool
 * runner whose sandboxes any replica can reopen: Kubernetes) the records are the runs' leases in PostgreSQL, through
 * the orchestrator, instead of files: any replica adopts what a stopped or lost one held.
 */
export function durableExecutions(
  sandbox: SandboxBackend,
  config: { SANDBOX_STATE_DIR: string; WORKSPACE_ROOT: string },
  leases?: {
    link: Pick<OrchestratorLink, 'call'>;
    runnerId: string;
    bounds: LeaseWriteBounds;
    log: Logger;
  },
): { adoptionRecords?: AdoptionRecords; checkpoints?: TurnCheckpoints; leased?: boolean } {
  const stateDir = (kind: string) =>
    path.join(config.SANDBOX_STATE_DIR, kind, rootKey(config.WORKSPACE_ROOT));
  const checkpoints = new TurnCheckpoints(sandbox.checkpointDir ?? stateDir('checkpoints'));
  // A backend that shares checkpoints between runner replicas resumes lost agents without reopening sandboxes.
  if (!sandbox.reopen) return sandbox.checkpointDir ? { checkpoints } : {};
  if (leases)
    return {
      adoptionRecords: new AdoptionRecords(
        new LeaseRecords(leases.link, leases.runnerId, leases.bounds, leases.log),
      ),
      checkpoints,
      leased: true,
    };
  return { adoptionRecords: new AdoptionRecords(new RecordFiles(stateDir('adopt'))), checkpoints };
}

/**
 * Takes back the runs whose agents outlived the previous process (docs/run-lifecycle.md "Runner restarts"): ends
 * the agents it left unrecorded, ends ERROR the runs whose records are of a newer version, and adopts the others.
 * Call once, before this process executes anything (on Kubernetes, again for each ask: `limit`, the free slots, bounds
 * the runs taken from other replicas; a runner's own records are all taken back). Returns the executions taken back, each settled without throwing.
 */
export async function takeBackRuns(
  executor: RunExecutor,
  sandbox: SandboxBackend,
  records: AdoptionRecords | undefined,
  stopSignal: AbortSignal,
  logger: Logger,
  limit?: number,
): Promise<Array<Promise<unknown>>> {
  const { records: adopting, refused } = (await records?.list(limit)) ?? { records: [], refused: [] };
  const released = await sandbox.releaseLeftovers?.(adopting.map((r) => r.assignment.run_id));
  if (released?.length)
    logger.warn({ runIds: released }, 'ended agents the previous runner process left unrecorded');
  const taken: Array<Promise<unknown>> = [];
  for (const { target, reason } of refused) {
    logger.error(
      { runId: target.run_id, reason },
      'run not taken back: its adoption record is of a newer runner',
    );
    taken.push(
      executor
        .refuse(target, `The runner restarted and could not take the run back: ${reason}`)
        .then(() => records?.remove(target))
        .catch((err: unknown) => logger.error({ err, runId: target.run_id }, 'run not ended')),
    );
  }
  for (const record of adopting) {
    logger.info(
      { runId: record.assignment.run_id, sinceProcessStartMs: Math.round(process.uptime() * 1000) },
      'taking back a run the previous runner process left',
    );
    taken.push(
      executor
        .adopt(record, stopSignal)
        .catch((err: unknown) =>
          logger.error({ err, runId: record.assignment.run_id }, 'run not taken back'),
        ),
    );
  }
  return taken;
}
