import { scheduleOutput } from '../test-support/orchestrator-answers';
import { toScheduledAgentItem } from './scheduled-agent-item';

const schedule = scheduleOutput();

describe('toScheduledAgentItem', () => {
  it('maps to the contract shape with nulls for empty history and spawn error', () => {
    const item = toScheduledAgentItem(schedule);
    expect(item).toMatchObject({
      id: 'sched_1',
      cron_schedule: '0 3 * * *',
      agent_config: { name: 'n' },
      created_by: { uid: 'user_1', type: 'user' },
      updated_by: { uid: 'agent_1', type: 'service_account' },
      history: { last_ran: null, next_run: '2026-01-03T03:00:00.000Z' },
      last_spawn_error: null,
      scope: { type: 'Team', uid: 'team_1' },
    });
    expect(item.agent_uid).toBeUndefined();
    expect(item.history).not.toHaveProperty('recent_runs');
  });

  it('adds the recent runs on retrieve', () => {
    expect(toScheduledAgentItem(schedule, { withRecentRuns: true }).history).toMatchObject({
      recent_runs: [{ run_id: 'r1', state: 'SUCCEEDED' }],
    });
  });
});
