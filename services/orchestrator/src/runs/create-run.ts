import { AppError } from '@conveyor/errors';
import { newUuid, type Prisma, type PrismaClient, type PrincipalType } from '@conveyor/db';
import type { Caller__Output } from '@conveyor/proto';
import type { RunEvent } from '@conveyor/run-events';
import { harnessFor } from './harness-types';
import { ENQUEUE_RUN } from './outbox-relay';
import { resolveRunCatalog, type RunCatalog } from './resolve-run-catalog';

export const MAX_ORCHESTRATION_DEPTH = 10;

export interface CreateRunInput {
  prompt: string;
  title?: string;
  /** Skill spec; wins over `config.skill_spec`. */
  skill?: string;
  /** AmbientAgentConfig (contract shape), validated by the caller. */
  config?: Record<string, unknown>;
  mode?: string;
  metadata?: Record<string, string>;
  attachments?: Array<{ fileName: string; mimeType: string; data: Buffer }>;
  parentRunId?: string;
  agentIdentityUid?: string;
  source?: string;
  schedule?: { id: string; name: string; cron: string };
}

export interface CreateRunDeps {
  db: PrismaClient;
  /** Relays the committed outbox entry right away (the periodic sweep covers a crash in between). */
  kickOutbox: () => void;
  /** The harness used when the config asks for the built-in one. */
  defaultHarness: string;
  /** Model, environment, skill and identity checks and defaults (resolve-run-catalog.ts), for every run source. */
  catalog: RunCatalog;
}

function titleFrom(prompt: string, skill: string | undefined): string {
  const firstLine = prompt.split('\n').find((l) => l.trim())?.trim() ?? '';
  const base = firstLine || (skill ? `Run ${skill}` : 'Untitled run');
  return base.length > 80 ? `${base.slice(0, 77)}...` : base;
}

/** `owner/repo:path/to/skill/SKILL.md` → `skill` (the directory name), used as the config name of skill runs. */
export function skillName(spec: string): string {
  const path = spec.split(':').pop() ?? spec;
  const parts = path.split('/').filter(Boolean);
  const last = parts[parts.length - 1] ?? path;
  return (/^SKILL\.md$/i.test(last) ? parts[parts.length - 2] : last) ?? last;
}

/**
 * Creates a run: the row, its first events, attachments and the outbox entry that enqueues it commit in one
 * transaction, so there is never a queued job without its row nor a QUEUED row that nothing will pick up.
 */
export async function createRun(
  deps: CreateRunDeps,
  caller: Caller__Output,
  input: CreateRunInput,
  /** Writes that must commit with the run or not at all (a schedule's per-tick firing row makes ticks idempotent). */
  inTransaction?: (tx: Prisma.TransactionClient, runId: string) => Promise<void>,
): Promise<{ runId: string; state: string }> {
  const harness = harnessFor(input.config ?? {}, deps.defaultHarness);
  const resolved = await resolveRunCatalog(deps.catalog, caller, { ...input, harness });
  const config: Record<string, unknown> = { ...(resolved?.config ?? input.config ?? {}) };
  const skill = resolved?.skill ?? input.skill ?? (typeof config.skill_spec === 'string' ? config.skill_spec : undefined) ?? (Array.isArray(config.skills) ? (config.skills[0] as string | undefined) : undefined);
  if (!input.prompt.trim() && !skill) throw new AppError('invalid_request', 'prompt is required unless a skill is given');
  if (skill) {
    config.skill_spec = skill;
    config.name ??= skillName(skill);
  }

  const runId = newUuid();
  const now = new Date();
  let executorType: PrincipalType = caller.principal_type === 'AGENT' ? 'AGENT' : 'USER';
  let executorId = caller.principal_id;

  await deps.db.$transaction(async (tx) => {
    let ancestorIds: string[] = [];
    if (input.parentRunId) {
      const parent = await tx.run.findFirst({ where: { id: input.parentRunId, teamId: caller.team_id }, select: { id: true, ancestorIds: true } });
      if (!parent) throw new AppError('invalid_request', 'parent_run_id does not name a run you can access');
      ancestorIds = [parent.id, ...parent.ancestorIds];
      if (ancestorIds.length > MAX_ORCHESTRATION_DEPTH) {
        throw new AppError('invalid_request', `orchestration depth exceeds the maximum of ${MAX_ORCHESTRATION_DEPTH}`);
      }
    }
    if (input.agentIdentityUid) {
      const identity = await tx.agentIdentity.findFirst({ where: { id: input.agentIdentityUid, teamId: caller.team_id } });
      if (!identity) throw new AppError('resource_not_found', 'Agent identity not found');
      executorType = 'AGENT';
      executorId = identity.id;
    }
    await tx.run.create({
      data: {
        id: runId,
        teamId: caller.team_id,
        title: input.title?.trim() || titleFrom(input.prompt, skill),
        prompt: input.prompt,
        mode: input.mode ?? 'normal',
        source: input.source ?? 'API',
        creatorType: caller.principal_type === 'AGENT' ? 'AGENT' : 'USER',
        creatorId: caller.principal_id,
        executorType,
        executorId,
        configName: typeof config.name === 'string' ? config.name : null,
        modelId: typeof config.model_id === 'string' ? config.model_id : null,
        environmentId: typeof config.environment_id === 'string' ? config.environment_id : null,
        skillSpec: skill ?? null,
        skillInstructions: resolved?.skillInstructions ?? null,
        environmentSpec: resolved?.environmentSpec,
        harness,
        workerHost: typeof config.worker_host === 'string' && config.worker_host !== 'warp' ? config.worker_host : null,
        config: config as Prisma.InputJsonValue,
        metadata: input.metadata ?? {},
        parentRunId: input.parentRunId ?? null,
        ancestorIds,
        scheduleId: input.schedule?.id ?? null,
        scheduleName: input.schedule?.name ?? null,
        scheduleCron: input.schedule?.cron ?? null,
        conversationId: newUuid(),
        sessionId: newUuid(),
        createdAt: now,
        updatedAt: now,
      },
    });
    const created: RunEvent = { kind: 'state_changed', from: null, to: 'QUEUED' };
    const prompt: RunEvent = { kind: 'user_message', text: input.prompt, source: 'prompt' };
    await tx.runEvent.createMany({
      data: [
        { runId, execution: 1, kind: created.kind, data: created, createdAt: now },
        { runId, execution: 1, kind: prompt.kind, data: prompt, createdAt: now },
      ],
    });
    if (input.attachments?.length) {
      await tx.runAttachment.createMany({
        data: input.attachments.map((a) => ({ id: newUuid(), runId, fileName: a.fileName, mimeType: a.mimeType, data: new Uint8Array(a.data) })),
      });
    }
    if (inTransaction) await inTransaction(tx, runId);
    await tx.outboxEntry.create({ data: { kind: ENQUEUE_RUN, payload: { runId, execution: 1 } } });
  });
  deps.kickOutbox();
  return { runId, state: 'QUEUED' };
}
