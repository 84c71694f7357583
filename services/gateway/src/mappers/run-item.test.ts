import { runOutput } from '../test-support/orchestrator-answers';
import { toRunItem } from './run-item';

describe('toRunItem', () => {
  it('maps the contract keys and omits empty optional ones', () => {
    const item = toRunItem(runOutput({}), 'https://conveyor.example');
    expect(item).toMatchObject({
      run_id: 'r1',
      task_id: 'r1',
      state: 'QUEUED',
      started_at: null,
      scope: { type: 'Team', uid: 'team1' },
    });
    expect(item.creator).toEqual({ uid: 'u1', type: 'user', display_name: undefined, email: undefined });
    expect(item.executor).toMatchObject({ uid: 'a1', type: 'service_account', display_name: 'Bot' });
    expect(item.parent_run_id).toBeUndefined();
    expect(item.agent_skill).toBeUndefined();
    expect(item.session_link).toBe('https://conveyor.example/console/runs/r1');
    expect(item.run_time).toBeUndefined();
    expect(item.request_usage).toBeUndefined();
  });

  it('sends run_time once the run ended and request_usage when usage was reported', () => {
    const item = toRunItem(
      runOutput({
        started_at: '2026-11-22T10:00:00.000Z',
        ended_at: '2026-11-22T10:02:30.500Z',
        request_usage: {
          total_tokens: '150',
          input_tokens: '100',
          output_tokens: '50',
          inference_cost_usd: 0.25,
        },
      }),
      'https://conveyor.example',
    );
    expect(item.run_time).toBe('PT2M30.5S');
    expect(item.request_usage).toEqual({
      total_tokens: 150,
      inference_cost_usd: 0.25,
      usage_by_category: { input_tokens: 100, output_tokens: 50 },
    });
  });

  it('derives agent_skill from the skill spec', () => {
    const item = toRunItem(
      runOutput({
        skill_spec: 'acme/api:.claude/skills/deploy/SKILL.md',
        config_json: '{"name":"deploy","skill_spec":"acme/api:.claude/skills/deploy/SKILL.md"}',
      }),
      'https://conveyor.example',
    );
    expect(item.agent_skill).toEqual({ name: 'deploy', full_path: '.claude/skills/deploy/SKILL.md' });
  });
});
