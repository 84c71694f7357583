import { AppError } from '@conveyor/errors';
import type { ListRunsRequest__Output } from '@conveyor/proto';
import {
  ARTIFACT_TYPES,
  DEFAULT_RUN_LIST_LIMIT,
  EMPTY_ENVIRONMENT,
  EXECUTION_LOCATIONS,
  isEnvironmentId,
  isMetadataKey,
  isMetadataValue,
  MAX_METADATA_FILTERS,
  MAX_RUN_LIST_LIMIT,
  MAX_SEARCH_LENGTH,
  MAX_SEARCH_TERMS,
  searchTerms,
  normalizeRfc3339,
  RUN_SORT_FIELDS,
  RUN_SOURCES,
  RUN_STATES,
  SORT_ORDERS,
  type RunSortField,
  type RunStateName,
  type SortOrder,
} from '@conveyor/run-events';
import { decodeRunCursor, type RunCursor } from './run-cursor';

/** A validated ListRuns request: every value checked, defaults applied, absent filters undefined. */
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
  source?: string;
  executionLocation?: string;
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
  artifactType?: string;
  /** `q` split into distinct words; each must appear (case-insensitively) in the title, prompt or skill spec. */
  q?: string[];
  factoryUid?: string;
}

const invalid = (param: string, message: string) =>
  new AppError('invalid_request', `${param}: ${message}`, { details: { parameter: param } });

function oneOf<T extends string>(param: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value))
    throw invalid(param, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

const nonEmpty = (value: string | undefined): string | undefined => (value ? value : undefined);

function timestamp(param: string, value: string): string | undefined {
  if (!value) return undefined;
  const normalized = normalizeRfc3339(value);
  if (!normalized) throw invalid(param, 'must be an RFC 3339 timestamp such as 2019-12-27T18:11:19.117Z');
  return normalized;
}

/**
 * Validates a ListRuns request (the gateway has already checked the query string; this is the domain's own
 * check, so other callers get the same answers). Throws invalid_request naming the parameter.
 */
export function parseRunListRequest(request: ListRunsRequest__Output): RunListQuery {
  const limit = request.limit || DEFAULT_RUN_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_RUN_LIST_LIMIT)
    throw invalid('limit', `must be between 1 and ${MAX_RUN_LIST_LIMIT}`);
  const sortBy = oneOf('sort_by', request.sort_by || 'updated_at', RUN_SORT_FIELDS);
  const sortOrder = oneOf('sort_order', request.sort_order || 'desc', SORT_ORDERS);
  const cursor = request.cursor ? decodeRunCursor(request.cursor, { sortBy, sortOrder }) : undefined;

  const filters: RunListFilters = {};
  if (request.states.length > 0)
    filters.states = [...new Set(request.states.map((s) => oneOf('state', s, RUN_STATES)))];
  filters.configName = nonEmpty(request.name);
  filters.modelId = nonEmpty(request.model_id);
  filters.creatorId = nonEmpty(request.creator);
  filters.executorId = nonEmpty(request.executor);
  if (request.source) filters.source = oneOf('source', request.source, RUN_SOURCES);
  if (request.execution_location)
    filters.executionLocation = oneOf('execution_location', request.execution_location, EXECUTION_LOCATIONS);
  filters.createdAfter = timestamp('created_after', request.created_after);
  filters.createdBefore = timestamp('created_before', request.created_before);
  filters.updatedAfter = timestamp('updated_after', request.updated_after);
  const env = request.environment_id;
  if (env !== undefined && env !== '') {
    if (env === EMPTY_ENVIRONMENT) filters.environmentId = null;
    else if (isEnvironmentId(env)) filters.environmentId = env;
    else throw invalid('environment_id', `must be 22 letters and digits, or ${EMPTY_ENVIRONMENT}`);
  }
  filters.skillSpec = nonEmpty(request.skill_spec);
  filters.scheduleId = nonEmpty(request.schedule_id);
  filters.ancestorRunId = nonEmpty(request.ancestor_run_id);
  const pairs = Object.entries(request.metadata ?? {});
  if (pairs.length > MAX_METADATA_FILTERS) throw invalid('metadata', `at most ${MAX_METADATA_FILTERS} pairs`);
  for (const [key, value] of pairs) {
    if (!isMetadataKey(key))
      throw invalid(`metadata[${key}]`, 'keys are 1-64 characters of letters, digits, ".", "_" and "-"');
    if (!isMetadataValue(value))
      throw invalid(`metadata[${key}]`, 'values are at most 256 bytes without NUL');
  }
  if (pairs.length > 0) filters.metadata = Object.fromEntries(pairs);
  if (request.automation_id) {
    if (!isMetadataValue(request.automation_id))
      throw invalid('automation_id', 'at most 256 bytes without NUL');
    filters.automationId = request.automation_id;
  }
  if (request.artifact_type)
    filters.artifactType = oneOf('artifact_type', request.artifact_type, ARTIFACT_TYPES);
  const q = request.q.trim();
  if (q) {
    if (q.length > MAX_SEARCH_LENGTH || q.includes('\u0000'))
      throw invalid('q', `at most ${MAX_SEARCH_LENGTH} characters`);
    const terms = searchTerms(q);
    if (terms.length > MAX_SEARCH_TERMS) throw invalid('q', `at most ${MAX_SEARCH_TERMS} words`);
    // A word of 3+ characters gives the trigram indexes something to look up; shorter ones alone would scan.
    if (!terms.some((t) => [...t].length >= 3))
      throw invalid('q', 'needs at least one word of 3 or more characters');
    filters.q = terms;
  }
  filters.factoryUid = nonEmpty(request.factory_uid);
  for (const key of Object.keys(filters) as (keyof RunListFilters)[])
    if (filters[key] === undefined) delete filters[key];
  return { limit, sortBy, sortOrder, cursor, filters };
}
