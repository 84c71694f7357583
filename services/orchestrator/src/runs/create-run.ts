import { currentTraceCarrier } from '@conveyor/tracing';
import { AppError } from '@conveyor/errors';
import { newUuid, type Prisma, type PrismaClient, type PrincipalType } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { harnessNameFromConfig } from '@conveyor/harnesses';
import { insertRuns, type NewRun } from './insert-runs';
import { resolveRunCatalog, type RunCatalog } from './resolve-run-catalog';
import { isUuid } from './run-access';
import type { RunReferences } from './run-references';

export const MAX_ORCHESTRATION_DEPTH = 10;

/** The prompt of a handoff run created with a conversation_id and no prompt. */
export const CONTINUE_PROMPT = 'Continue from where the previous run stopped.';

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
  /** Continue this conversation: the run joins it (contract §2.4); must be a conversation of the caller's team. */
  conversationId?: string;
  /** Email or user ID recorded as the creator; agent keys whose identity has on_behalf_of_enabled only. */
  onBehalfOf?: string;
  source?: string;
  schedule?: { id: string; name: string; cron: string };
}

/** What deciding a run reads: no database of its own, so its rules are tested in memory (create-run.test.ts). */
export interface PrepareRunDeps {
  /** What the run's references name (run-references.ts). */
  references: RunReferences;
  /** The harness used when the config asks for the built-in one. */
  defaultHarness: string;
  /** Model, environment, skill and identity checks and defaults (resolve-run-catalog.ts), for every run source. */
  catalog: RunCatalog;
}

export interface CreateRunDeps extends PrepareRunDeps {
  db: PrismaClient;
  /** Relays the committed outbox entry right away (the periodic sweep covers a crash in between). */
  kickOutbox: () => void;
}

function titleFrom(prompt: string, skill: string | undefined): string {
  const firstLine =
    prompt
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? '';
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
 * `on_behalf_of` (contract §2.4): only an agent API key whose identity has `on_behalf_of_enabled` may name another
 * creator, and the target (email or user ID) must be a member of the caller's team. Returns the user ID.
 */
async function onBehalfOfCreator(references: RunReferences, caller: Caller, target: string): Promise<string> {
  const agent =
    caller.principal_type === 'AGENT'
      ? await references.findIdentity(caller.team_id, caller.principal_id)
      : null;
  if ((agent?.config as { on_behalf_of_enabled?: unknown } | undefined)?.on_behalf_of_enabled !== true) {
    throw new AppError(
      'not_authorized',
      'on_behalf_of: only API keys of an agent with on_behalf_of_enabled may create runs on behalf of a user',
    );
  }
  const userId = await references.findMemberId(caller.team_id, target);
  if (!userId)
    throw new AppError('invalid_request', 'on_behalf_of: no member of this team has that email or user ID');
  return userId;
}

/**
 * Decides every value of a new run and checks every reference it makes (catalog, parent, identity, conversation,
 * on_behalf_of) without writing anything, so that runs can be written one at a time or many in one statement.
 */
export async function prepareRun(
  deps: PrepareRunDeps,
  caller: Caller,
  input: CreateRunInput,
): Promise<NewRun> {
  const { references } = deps;
  const harness = harnessNameFromConfig(input.config ?? {}, deps.defaultHarness);
  const resolved = await resolveRunCatalog(deps.catalog, references, caller, { ...input, harness });
  const config: Record<string, unknown> = { ...resolved.config };
  // The catalog derived the skill (argument, config.skill_spec, then config.skills[0]) and normalized it.
  const skill = resolved.skill;
  const prompt = input.prompt.trim() || !input.conversationId ? input.prompt : CONTINUE_PROMPT;
  if (!prompt.trim() && !skill)
    throw new AppError('invalid_request', 'prompt is required unless a skill is given');
  if (skill) {
    config.skill_spec = skill;
    config.name ??= skillName(skill);
  }

  let executorType: PrincipalType = caller.principal_type === 'AGENT' ? 'AGENT' : 'USER';
  let executorId = caller.principal_id;
  let creatorType: PrincipalType = executorType;
  let creatorId = caller.principal_id;
  let conversationId = newUuid();
  let ancestorIds: string[] = [];
  // Runs are never deleted on their own (only with their team), so a parent or conversation checked here still
  // exists when the run is written.
  if (input.parentRunId) {
    const parent = await references.findRun(caller.team_id, input.parentRunId);
    if (!parent) throw new AppError('invalid_request', 'parent_run_id does not name a run you can access');
    ancestorIds = [parent.id, ...parent.ancestorIds];
    if (ancestorIds.length > MAX_ORCHESTRATION_DEPTH) {
      throw new AppError(
        'invalid_request',
        `orchestration depth exceeds the maximum of ${MAX_ORCHESTRATION_DEPTH}`,
      );
    }
  }
  if (input.agentIdentityUid) {
    // resolveRunCatalog found this identity in the caller's team and checked it is available.
    executorType = 'AGENT';
    executorId = input.agentIdentityUid;
  }
  if (input.conversationId) {
    const exists =
      isUuid(input.conversationId) &&
      (await references.conversationExists(caller.team_id, input.conversationId));
    if (!exists) throw new AppError('resource_not_found', 'conversation_id: Conversation not found');
    conversationId = input.conversationId;
  }
  if (input.onBehalfOf) {
    creatorType = 'USER';
    creatorId = await onBehalfOfCreator(references, caller, input.onBehalfOf);
  }
  return {
    id: newUuid(),
    teamId: caller.team_id,
    title: input.title?.trim() || titleFrom(prompt, skill),
    prompt,
    mode: input.mode ?? 'normal',
    source: input.source ?? 'API',
    creatorType,
    creatorId,
    executorType,
    executorId,
    configName: typeof config.name === 'string' ? config.name : null,
    modelId: typeof config.model_id === 'string' ? config.model_id : null,
    environmentId: typeof config.environment_id === 'string' ? config.environment_id : null,
    skillSpec: skill ?? null,
    skillInstructions: resolved.skillInstructions ?? null,
    environmentSpec: resolved.environmentSpec,
    harness,
    workerHost:
      typeof config.worker_host === 'string' && config.worker_host !== 'warp' ? config.worker_host : null,
    config,
    metadata: input.metadata ?? {},
    parentRunId: input.parentRunId ?? null,
    ancestorIds,
    scheduleId: input.schedule?.id ?? null,
    scheduleName: input.schedule?.name ?? null,
    scheduleCron: input.schedule?.cron ?? null,
    conversationId,
    sessionId: newUuid(),
    createdAt: new Date(),
    attachments: (input.attachments ?? []).map((a) => ({ id: newUuid(), ...a })),
    trace: currentTraceCarrier(),
  };
}

/**
 * Creates a run: the row, its first events, attachments and the outbox entry that enqueues it commit together
 * (insert-runs.ts), so there is never a queued job without its row nor a QUEUED row that nothing will pick up.
 */
export async function createRun(
  deps: CreateRunDeps,
  caller: Caller,
  input: CreateRunInput,
  /** Writes that must commit with the run or not at all (a schedule's per-tick firing row makes ticks idempotent). */
  inTransaction?: (tx: Prisma.TransactionClient, runId: string) => Promise<void>,
): Promise<{ runId: string; state: string; workerHost: string | null }> {
  const run = await prepareRun(deps, caller, input);
  if (inTransaction) {
    await deps.db.$transaction(async (tx) => {
      await insertRuns(tx, [run]);
      await inTransaction(tx, run.id);
    });
  } else {
    await insertRuns(deps.db, [run]);
  }
  deps.kickOutbox();
  return { runId: run.id, state: 'QUEUED', workerHost: run.workerHost };
}
