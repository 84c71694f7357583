import type { Run__Output } from '@conveyor/proto';

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
