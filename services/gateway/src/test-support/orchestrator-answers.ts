import type { Run__Output, Schedule__Output } from '@conveyor/proto';

// Orchestrator answers for gateway tests, built as the gRPC client delivers them (every field present).

/** A run as the orchestrator answers it: queued, from the API, no optional parts; tests override what they need. */
export const runOutput = (overrides: Partial<Run__Output> = {}): Run__Output =>
  ({
    run_id: 'r1',
    title: 't',
    prompt: 'p',
    state: 'QUEUED',
    created_at: '2026-11-22T10:00:00.000Z',
    updated_at: '2026-11-22T10:00:00.000Z',
    started_at: '',
    ended_at: '',
    config_json: '{}',
    metadata: {},
    source: 'API',
    execution_location: 'REMOTE',
    creator: { type: 'USER', uid: 'u1', display_name: '', email: '' },
    executor: { type: 'AGENT', uid: 'a1', display_name: 'Bot', email: '' },
    conversation_id: 'c1',
    session_id: 's1',
    parent_run_id: '',
    schedule: null,
    status_message: null,
    artifacts: [],
    team_id: 'team1',
    mode: 'normal',
    is_sandbox_running: false,
    is_run_type_cancellable: true,
    skill_spec: '',
    request_usage: null,
    ...overrides,
  }) as Run__Output;

/** An enabled nightly schedule that has not run yet; tests override what they need. */
export const scheduleOutput = (overrides: Partial<Schedule__Output> = {}): Schedule__Output => ({
  id: 'sched_1',
  team_id: 'team_1',
  name: 'nightly',
  cron_schedule: '0 3 * * *',
  timezone: 'UTC',
  enabled: true,
  prompt: 'p',
  mode: 'normal',
  config_json: '{"name":"n"}',
  agent_uid: '',
  metadata: { k: 'v' },
  created_by: { type: 'USER', uid: 'user_1', display_name: '', email: '' },
  updated_by: { type: 'AGENT', uid: 'agent_1', display_name: '', email: '' },
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-02T00:00:00.000Z',
  last_ran: '',
  next_run: '2026-01-03T03:00:00.000Z',
  last_spawn_error: '',
  recent_runs: [{ run_id: 'r1', state: 'SUCCEEDED', title: 't', created_at: 'c', updated_at: 'u' }],
  ...overrides,
});
