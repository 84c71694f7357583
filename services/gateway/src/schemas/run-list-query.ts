import { z } from 'zod';
import { AppError } from '@conveyor/errors';
import type { ListRunsRequest } from '@conveyor/proto';
import {
  ARTIFACT_TYPES,
  EMPTY_ENVIRONMENT,
  EXECUTION_LOCATIONS,
  isEnvironmentId,
  isMetadataKey,
  isMetadataValue,
  MAX_METADATA_FILTERS,
  MAX_RUN_LIST_LIMIT,
  MAX_SEARCH_LENGTH,
  MAX_SEARCH_TERMS,
  normalizeRfc3339,
  RUN_SORT_FIELDS,
  RUN_SOURCES,
  RUN_STATES,
  searchTerms,
  SORT_ORDERS,
} from '@conveyor/run-events';
import { parseQuery } from '../validation';

const once = z.string({ invalid_type_error: 'must be given once' });
const oneOf = <T extends string>(values: readonly [T, ...T[]]) =>
  z.enum(values, {
    errorMap: (issue) => ({
      message: issue.code === 'invalid_type' ? 'must be given once' : `must be one of ${values.join(', ')}`,
    }),
  });
const timestamp = once.transform((value, ctx) => {
  const normalized = normalizeRfc3339(value);
  if (!normalized)
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: 'must be an RFC 3339 timestamp such as 2019-12-27T18:11:19.117Z',
    });
  return normalized ?? z.NEVER;
});

/** Query of GET /agent/runs (contract §2.5) without the `metadata[<key>]` pairs, which are read separately. */
export const runListQueryObject = z.object({
  limit: once
    .regex(/^\d+$/, 'must be a positive integer')
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(1, `must be between 1 and ${MAX_RUN_LIST_LIMIT}`)
        .max(MAX_RUN_LIST_LIMIT, `must be between 1 and ${MAX_RUN_LIST_LIMIT}`),
    )
    .optional(),
  cursor: once.optional(),
  sort_by: oneOf(RUN_SORT_FIELDS).optional(),
  sort_order: oneOf(SORT_ORDERS).optional(),
  state: z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (Array.isArray(v) ? v : [v]))
    .pipe(z.array(oneOf(RUN_STATES)))
    .optional(),
  name: once.optional(),
  model_id: once.optional(),
  creator: once.optional(),
  executor: once.optional(),
  source: oneOf(RUN_SOURCES).optional(),
  execution_location: oneOf(EXECUTION_LOCATIONS).optional(),
  created_after: timestamp.optional(),
  created_before: timestamp.optional(),
  updated_after: timestamp.optional(),
  environment_id: once
    .refine(
      (v) => v === EMPTY_ENVIRONMENT || isEnvironmentId(v),
      `must be 22 letters and digits, or ${EMPTY_ENVIRONMENT}`,
    )
    .optional(),
  skill_spec: once.optional(),
  skill: once.optional(),
  schedule_id: once.optional(),
  ancestor_run_id: once.optional(),
  artifact_type: oneOf(ARTIFACT_TYPES).optional(),
  q: once
    .max(MAX_SEARCH_LENGTH, `must be at most ${MAX_SEARCH_LENGTH} characters`)
    .refine((q) => searchTerms(q).length <= MAX_SEARCH_TERMS, `must be at most ${MAX_SEARCH_TERMS} words`)
    .refine(
      (q) => q.trim() === '' || searchTerms(q).some((t) => [...t].length >= 3),
      'needs at least one word of 3 or more characters',
    )
    .optional(),
  automation_id: once.refine(isMetadataValue, 'must be at most 256 bytes without NUL').optional(),
  factory_uid: once.optional(),
});

const listQuery = runListQueryObject.refine((q) => !q.skill || !q.skill_spec || q.skill === q.skill_spec, {
  message: 'skill is an alias of skill_spec; give one, or the same value',
  path: ['skill'],
});

const METADATA_PARAM = /^metadata\[(.*)\]$/;

const invalid = (parameter: string, message: string) =>
  new AppError('invalid_request', `${parameter}: ${message}`, { details: { parameter } });

/**
 * `metadata[<key>]=<value>` pairs. express 5 parses query strings with Node's `querystring` ("simple"), so a
 * bracketed key (sent percent-encoded by the SDK: `metadata%5Bk%5D=v`) arrives as the literal key `metadata[k]`.
 */
export function metadataFilters(query: Record<string, unknown>): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const [param, value] of Object.entries(query)) {
    if (param === 'metadata') throw invalid('metadata', 'use metadata[<key>]=<value>');
    const match = METADATA_PARAM.exec(param);
    if (!match) continue;
    const key = match[1]!;
    if (typeof value !== 'string') throw invalid(param, 'must be given once');
    if (!isMetadataKey(key))
      throw invalid(param, 'keys are 1-64 characters of letters, digits, ".", "_" and "-"');
    if (!isMetadataValue(value)) throw invalid(param, 'values are at most 256 bytes without NUL');
    pairs[key] = value;
  }
  if (Object.keys(pairs).length > MAX_METADATA_FILTERS)
    throw invalid('metadata', `at most ${MAX_METADATA_FILTERS} pairs`);
  return pairs;
}

/**
 * The query string as a ListRuns request. Empty values (`k=`, how the SDK sends null) mean "not given";
 * unknown parameters are ignored. Every rejection is a 400 invalid_request naming the parameter.
 */
export function parseRunListQuery(raw: Record<string, unknown>): Omit<ListRunsRequest, 'caller'> {
  const query = Object.fromEntries(
    Object.entries(raw).filter(([k, v]) => v !== '' && !METADATA_PARAM.test(k)),
  );
  const q = parseQuery(listQuery, query);
  const metadata = metadataFilters(raw);
  return {
    limit: q.limit ?? 0,
    cursor: q.cursor ?? '',
    sort_by: q.sort_by ?? '',
    sort_order: q.sort_order ?? '',
    states: q.state ?? [],
    name: q.name ?? '',
    model_id: q.model_id ?? '',
    creator: q.creator ?? '',
    executor: q.executor ?? '',
    source: q.source ?? '',
    execution_location: q.execution_location ?? '',
    created_after: q.created_after ?? '',
    created_before: q.created_before ?? '',
    updated_after: q.updated_after ?? '',
    ...(q.environment_id !== undefined ? { environment_id: q.environment_id } : {}),
    skill_spec: q.skill_spec ?? q.skill ?? '',
    schedule_id: q.schedule_id ?? '',
    ancestor_run_id: q.ancestor_run_id ?? '',
    metadata,
    artifact_type: q.artifact_type ?? '',
    q: q.q?.trim() ?? '',
    automation_id: q.automation_id ?? '',
    factory_uid: q.factory_uid ?? '',
  };
}
