import type { ListRunsRequest__Output } from './gen/conveyor/orchestrator/v1/ListRunsRequest';

/** A ListRuns request with every field at its proto3 default (no filter, default sort), for callers and tests. */
export function listRunsRequest(overrides: Partial<ListRunsRequest__Output> = {}): ListRunsRequest__Output {
  return {
    caller: null,
    limit: 0,
    cursor: '',
    sort_by: '',
    sort_order: '',
    states: [],
    name: '',
    model_id: '',
    creator: '',
    executor: '',
    source: '',
    execution_location: '',
    created_after: '',
    created_before: '',
    updated_after: '',
    skill_spec: '',
    schedule_id: '',
    ancestor_run_id: '',
    metadata: {},
    artifact_type: '',
    q: '',
    automation_id: '',
    factory_uid: '',
    ...overrides,
  };
}
