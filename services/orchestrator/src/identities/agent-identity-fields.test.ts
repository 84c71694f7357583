import { applyUpdate, configFromCreate, toAgentResponse } from './agent-identity-fields';

describe('agent identity fields', () => {
  it('keeps given create fields, dropping nulls and empties', () => {
    expect(
      configFromCreate({
        name: 'x',
        description: 'd',
        prompt: null,
        skills: [],
        worker_host: '  box-1 ',
        secrets: [{ name: 'TOKEN' }],
      }),
    ).toEqual({
      description: 'd',
      worker_host: 'box-1',
      secrets: [{ name: 'TOKEN' }],
    });
  });

  it('updates per field: omitted or null unchanged, empty clears, non-empty replaces wholesale', () => {
    const current = {
      description: 'old',
      skills: ['a/b:SKILL.md'],
      mcp_servers: { x: { url: 'u' } },
      base_model: 'gpt-5',
      factory_uid: 'f1',
      memory: { auto_memory: { enabled: false }, attached_stores: [{ uid: 's1' }] },
    };
    const next = applyUpdate(current, {
      description: null,
      skills: [],
      mcp_servers: { y: { command: 'c' } },
      base_model: '',
      factory_uid: 'f2',
      memory: { attached_stores: [] },
    });
    expect(next).toEqual({
      description: 'old',
      mcp_servers: { y: { command: 'c' } },
      factory_uid: 'f1',
      memory: { auto_memory: { enabled: false } },
    });
  });

  it('renders the required AgentResponse keys with defaults', () => {
    const at = new Date('2026-01-01T00:00:00.000Z');
    expect(
      toAgentResponse(
        { id: 'agent_1', name: 'Bot', createdAt: at, updatedAt: at, config: { base_model: 'gpt-5' } },
        false,
      ),
    ).toEqual({
      uid: 'agent_1',
      name: 'Bot',
      available: false,
      created_at: at.toISOString(),
      updated_at: at.toISOString(),
      default_runner_uid: '',
      skills: [],
      secrets: [],
      memory: { attached_stores: [], auto_memory: { enabled: true } },
      agent_type: 'CUSTOM',
      base_model: 'gpt-5',
    });
  });
});
