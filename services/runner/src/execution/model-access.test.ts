import { AppError } from '@conveyor/errors';
import type { HarnessCredential__Output } from '@conveyor/proto';
import { harnessFor } from '../harness/harness-registry';
import type { ProxyRunOptions } from '../model-proxy/model-proxy';
import type { RunningModelProxy } from '../model-proxy/start-model-proxy';
import { fakeContext } from '../test-support/execution-fakes';
import { openModelAccess } from './model-access';

const credential = (over: Partial<HarnessCredential__Output> = {}): HarnessCredential__Output => ({
  provider: 'anthropic',
  api_key: 'sk-team-secret',
  secret_name: 'ANTHROPIC_API_KEY',
  models: ['claude-sonnet-4-5'],
  input_usd_per_million_tokens: 3,
  output_usd_per_million_tokens: 15,
  budget_usd: 0,
  spent_usd: 0,
  ...over,
});

/** A model proxy recording registrations; the orchestrator answers GetHarnessCredential with `answer`. */
function ports(answer: () => HarnessCredential__Output) {
  const registered: ProxyRunOptions[] = [];
  let closed = 0;
  const proxy = {
    proxy: {
      register: (options: ProxyRunOptions) => {
        registered.push(options);
        return { token: 'cvr_token', spentUsd: () => 0, close: () => void closed++ };
      },
    },
    target: { host: '127.0.0.1', port: 9 },
  } as unknown as RunningModelProxy;
  const link = { call: async () => answer() } as never;
  return { proxy, link, registered, closed: () => closed };
}

const claude = harnessFor('claude', {});

describe('openModelAccess', () => {
  it('grants nothing when the runner has no model proxy or the harness drives no model', async () => {
    const { ctx } = fakeContext({ harness: 'claude' });
    const { link, proxy } = ports(credential);
    expect(await openModelAccess(ctx, link, undefined, claude)).toEqual({});
    const demo = fakeContext({ harness: 'demo' }).ctx;
    expect(await openModelAccess(demo, link, proxy, harnessFor('demo', {}))).toEqual({});
  });

  it('registers the run with the team key, redacts the key from the run’s events, and halts on a refused key', async () => {
    const { ctx, events, halts } = fakeContext({ harness: 'claude' });
    const { link, proxy, registered } = ports(credential);
    const access = await openModelAccess(ctx, link, proxy, claude);
    expect('grant' in access && access.grant?.endpoint).toEqual({
      name: 'model-proxy',
      target: { host: '127.0.0.1', port: 9 },
    });
    expect(registered[0]).toMatchObject({ runId: 'run-1', provider: 'anthropic', apiKey: 'sk-team-secret' });
    ctx.reporter.emit({ kind: 'log', level: 'info', text: 'the key is sk-team-secret' });
    expect(JSON.stringify(events)).not.toContain('sk-team-secret');
    registered[0]!.onKeyRejected(401);
    expect(halts).toEqual([
      {
        state: 'FAILED',
        message: 'The model provider rejected the key in team secret "ANTHROPIC_API_KEY" (HTTP 401)',
        errorCode: 'external_authentication_required',
      },
    ]);
  });

  it('refuses a built-in CLI run without a credential, on its timeline', async () => {
    const { ctx, events } = fakeContext({ harness: 'claude' });
    const { link, proxy } = ports(() => {
      throw new AppError('integration_not_configured', 'No team secret ANTHROPIC_API_KEY');
    });
    expect(await openModelAccess(ctx, link, proxy, claude)).toEqual({
      refused: {
        state: 'FAILED',
        message: 'No team secret ANTHROPIC_API_KEY',
        errorCode: 'integration_not_configured',
      },
    });
    expect(events).toEqual([
      {
        kind: 'setup_step',
        step: 'harness_start',
        status: 'failed',
        detail: 'No team secret ANTHROPIC_API_KEY',
      },
    ]);
  });

  it('lets an operator’s command adapter run without a credential', async () => {
    const { ctx } = fakeContext({ harness: 'command:claude' });
    const { link, proxy } = ports(() => {
      throw new AppError('integration_not_configured', 'No team secret');
    });
    const adapter = harnessFor('command:claude', { claude: '/bin/true' });
    expect(await openModelAccess(ctx, link, proxy, adapter)).toEqual({});
  });

  it('refuses a run that spent its budget before this execution, and closes its registration', async () => {
    const { ctx } = fakeContext({ harness: 'claude' });
    const { link, proxy, closed } = ports(() => credential({ budget_usd: 1, spent_usd: 1.5 }));
    const access = await openModelAccess(ctx, link, proxy, claude);
    expect(access).toEqual({
      refused: expect.objectContaining({ state: 'FAILED', errorCode: 'budget_exceeded' }),
    });
    expect(closed()).toBe(1);
  });

  it('lets a conflict (the run is no longer ours) through', async () => {
    const { ctx } = fakeContext({ harness: 'claude' });
    const { link, proxy } = ports(() => {
      throw new AppError('conflict', 'not yours');
    });
    await expect(openModelAccess(ctx, link, proxy, claude)).rejects.toThrow('not yours');
  });
});
