import {
  DEFAULT_RUN_LIST_LIMIT,
  EMPTY_ENVIRONMENT,
  searchTerms,
  type ArtifactType,
  type ExecutionLocation,
  type RunSortField,
  type RunSource,
  type RunStateName,
  type SortOrder,
} from '@conveyor/run-events';
import { decodeRunCursor, type RunCursor } from './run-cursor';

/** A ListRuns request in the domain's terms: defaults applied, cursor decoded, absent filters undefined. */
export interface RunListQuery {
  limit: number;
  sortBy: RunSortField;
  sortOrder: SortOrder;
  cursor?: RunCursor;
  filters: RunListFilters;
}

export interface RunListFilters {
  states?: RunStateName[];
  configName?: string;
  modelId?: string;
  creatorId?: string;
  executorId?: string;
  source?: RunSource;
  executionLocation?: ExecutionLocation;
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  /** null = runs without an environment (`empty-environment`). */
  environmentId?: string | null;
  skillSpec?: string;
  scheduleId?: string;
  ancestorRunId?: string;
  metadata?: Record<string, string>;
  automationId?: string;
  artifactType?: ArtifactType;
  /** `q` split into distinct words; each must appear (case-insensitively) in the title, prompt or skill spec. */
  q?: string[];
  factoryUid?: string;
}

const nonEmpty = (value: string | undefined): string | undefined => (value ? value : undefined);

/**
 * A run list request as the gateway sends it: every filter a string, empty when unset (its contract and defaults in
 * the gateway's schemas/run-list-query.ts); `environment_id` is present-but-empty for "runs without an environment".
 */
export interface RunListRequest {
  limit: number;
  cursor: string;
  sort_by: string;
  sort_order: string;
  states: string[];
  name: string;
  model_id: string;
  creator: string;
  executor: string;
  source: string;
  execution_location: string;
  created_after: string;
  created_before: string;
  updated_after: string;
  environment_id?: string;
  skill_spec: string;
  schedule_id: string;
  ancestor_run_id: string;
  metadata: Record<string, string>;
  artifact_type: string;
  q: string;
  automation_id: string;
  factory_uid: string;
}

/**
 * Maps a ListRuns request onto the typed query. Only the gateway may call ListRuns (grpc/rpc-permissions.ts), and
 * it has validated every value against the public contract (its schemas/run-list-query.ts, with the shared rules
 * of @conveyor/run-events), so values are typed here, not checked again. The cursor is the exception: only the
 * orchestrator can decode it (a bad one is invalid_request). Rules that need the database are in list-runs.ts.
 */
export function parseRunListRequest(request: RunListRequest): RunListQuery {
  const limit = request.limit || DEFAULT_RUN_LIST_LIMIT;
  const sortBy = (request.sort_by || 'updated_at') as RunSortField;
  const sortOrder = (request.sort_order || 'desc') as SortOrder;
  const cursor = request.cursor ? decodeRunCursor(request.cursor, { sortBy, sortOrder }) : undefined;
  const env = request.environment_id;
  const terms = searchTerms(request.q);
  const filters: RunListFilters = {
    states: request.states.length > 0 ? [...new Set(request.states as RunStateName[])] : undefined,
    configName: nonEmpty(request.name),
    modelId: nonEmpty(request.model_id),
    creatorId: nonEmpty(request.creator),
    executorId: nonEmpty(request.executor),
    source: nonEmpty(request.source) as RunSource | undefined,
    executionLocation: nonEmpty(request.execution_location) as ExecutionLocation | undefined,
    createdAfter: nonEmpty(request.created_after),
    createdBefore: nonEmpty(request.created_before),
    updatedAfter: nonEmpty(request.updated_after),
    environmentId: env === EMPTY_ENVIRONMENT ? null : nonEmpty(env),
    skillSpec: nonEmpty(request.skill_spec),
    scheduleId: nonEmpty(request.schedule_id),
    ancestorRunId: nonEmpty(request.ancestor_run_id),
    metadata: Object.keys(request.metadata ?? {}).length > 0 ? request.metadata : undefined,
    automationId: nonEmpty(request.automation_id),
    artifactType: nonEmpty(request.artifact_type) as ArtifactType | undefined,
    q: terms.length > 0 ? terms : undefined,
    factoryUid: nonEmpty(request.factory_uid),
  };
  for (const key of Object.keys(filters) as (keyof RunListFilters)[])
    if (filters[key] === undefined) delete filters[key];
  return { limit, sortBy, sortOrder, cursor, filters };
}
