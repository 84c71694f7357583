import { once } from 'node:events';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@conveyor/logger';
import { ModelProxy, type ModelUsage, type ProxyRunOptions } from './model-proxy';
import type { Provider } from './provider-protocols';

const KEY = 'sk-real-provider-key-0123456789';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const sse = (events: Array<[string | undefined, unknown]>): string =>
  events
    .map(
      ([name, data]) =>
        `${name ? `event: ${name}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
    )
    .join('');

/** Answers like each provider would, per path: SSE when the request streams, JSON otherwise. */
const ANSWERS: Record<string, { type: string; body: string; status?: number }> = {
  '/v1/messages': {
    type: 'text/event-stream',
    body: sse([
      [
        'message_start',
        {
          type: 'message_start',
          message: { id: 'm1', usage: { input_tokens: 100, cache_read_input_tokens: 20, output_tokens: 1 } },
        },
      ],
      [
        'content_block_delta',
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello' } },
      ],
      [
        'message_delta',
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 30 } },
      ],
      ['message_stop', { type: 'message_stop' }],
    ]),
  },
  '/v1/messages/count_tokens': { type: 'application/json', body: JSON.stringify({ input_tokens: 55 }) },
  '/v1/responses': {
    type: 'text/event-stream',
    body: sse([
      [undefined, { type: 'response.created', response: { id: 'r1' } }],
      [undefined, { type: 'response.output_text.delta', delta: 'hi' }],
      [
        undefined,
        {
          type: 'response.completed',
          response: { id: 'r1', usage: { input_tokens: 200, output_tokens: 40, total_tokens: 240 } },
        },
      ],
      [undefined, '[DONE]'],
    ]),
  },
  '/v1/chat/completions': {
    type: 'application/json',
    body: JSON.stringify({ id: 'c1', usage: { prompt_tokens: 7, completion_tokens: 3 } }),
  },
  '/v1beta/models/gemini-2.5-pro:streamGenerateContent': {
    type: 'text/event-stream',
    body: sse([
      [
        undefined,
        {
          candidates: [{ content: { parts: [{ text: 'a' }] } }],
          usageMetadata: { promptTokenCount: 300, candidatesTokenCount: 5 },
        },
      ],
      [
        undefined,
        {
          candidates: [{ content: { parts: [{ text: 'b' }] } }],
          usageMetadata: { promptTokenCount: 300, candidatesTokenCount: 12, thoughtsTokenCount: 8 },
        },
      ],
    ]),
  },
  '/v1/models': { type: 'application/json', body: JSON.stringify({ data: [{ id: 'claude-sonnet-4' }] }) },
};

describe('model proxy (real sockets, local upstream)', () => {
  let upstream: Server;
  let upstreamUrl: string;
  let seen: Seen[];
  let rejectKey: boolean;
  let proxy: ModelProxy;
  let base: string;

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        const answer = rejectKey
          ? {
              status: 401,
              type: 'application/json',
              body: JSON.stringify({ error: { message: 'invalid x-api-key' } }),
            }
          : (ANSWERS[(req.url ?? '').split('?')[0]!] ?? { status: 404, type: 'text/plain', body: '' });
        res.writeHead(answer.status ?? 200, { 'content-type': answer.type });
        res.end(answer.body);
      });
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    proxy = new ModelProxy(
      { anthropic: upstreamUrl, openai: `${upstreamUrl}/v1`, gemini: upstreamUrl },
      createLogger({ service: 'test', level: 'silent' }),
    );
    const at = await proxy.listen('127.0.0.1', 0);
    base = `http://127.0.0.1:${at.port}`;
  });

  afterAll(async () => {
    await proxy.close();
    upstream.close();
  });

  beforeEach(() => {
    seen = [];
    rejectKey = false;
  });

  function registerRun(provider: Provider, overrides: Partial<ProxyRunOptions> = {}) {
    const usage: ModelUsage[] = [];
    const exceeded: number[] = [];
    const rejected: number[] = [];
    const refused: Array<{ host: string; port: number; reason: string }> = [];
    const registration = proxy.register({
      runId: 'run-1',
      provider,
      apiKey: KEY,
      models: ['claude-sonnet-4', 'gpt-5', 'gemini-2.5-pro'],
      inputUsdPerMillionTokens: 3,
      outputUsdPerMillionTokens: 15,
      budgetUsd: 0,
      spentUsd: 0,
      onUsage: (u) => usage.push(u),
      onBudgetExceeded: (spent) => exceeded.push(spent),
      onKeyRejected: (status) => rejected.push(status),
      onRefused: (refusal) => refused.push(refusal),
      ...overrides,
    });
    return { registration, usage, exceeded, rejected, refused };
  }

  const post = (path: string, headers: Record<string, string>, body: unknown) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it('refuses a missing or wrong token without calling the upstream', async () => {
    const { registration } = registerRun('anthropic');
    const missing = await post('/anthropic/v1/messages', {}, { model: 'claude-sonnet-4' });
    const wrong = await post(
      '/anthropic/v1/messages',
      { 'x-api-key': `${registration.token}x` },
      { model: 'claude-sonnet-4' },
    );
    const closed = registerRun('anthropic').registration;
    closed.close();
    const afterClose = await post(
      '/anthropic/v1/messages',
      { 'x-api-key': closed.token },
      { model: 'claude-sonnet-4' },
    );
    expect([missing.status, wrong.status, afterClose.status]).toEqual([401, 401, 401]);
    expect(seen).toHaveLength(0);
    registration.close();
  });

  it('swaps the run token for the real key where each provider expects it, and streams the answer unchanged', async () => {
    const anthropic = registerRun('anthropic');
    const res = await post(
      '/anthropic/v1/messages',
      { 'x-api-key': anthropic.registration.token, 'anthropic-version': '2023-06-01' },
      { model: 'claude-sonnet-4', stream: true },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(await res.text()).toBe(ANSWERS['/v1/messages']!.body);
    expect(seen[0]!.url).toBe('/v1/messages');
    expect(seen[0]!.headers['x-api-key']).toBe(KEY);
    expect(seen[0]!.headers['anthropic-version']).toBe('2023-06-01');
    expect(seen[0]!.headers.authorization).toBeUndefined();
    expect(JSON.parse(seen[0]!.body)).toEqual({ model: 'claude-sonnet-4', stream: true });

    const bearer = await post(
      '/anthropic/v1/messages',
      { authorization: `Bearer ${anthropic.registration.token}` },
      { model: 'claude-sonnet-4' },
    );
    expect(bearer.status).toBe(200);
    expect(seen[1]!.headers['x-api-key']).toBe(KEY);
    expect(seen[1]!.headers.authorization).toBeUndefined();

    const openai = registerRun('openai');
    expect(
      (
        await post(
          '/openai/responses',
          { authorization: `Bearer ${openai.registration.token}` },
          { model: 'gpt-5', stream: true },
        )
      ).status,
    ).toBe(200);
    expect(seen[2]!.url).toBe('/v1/responses');
    expect(seen[2]!.headers.authorization).toBe(`Bearer ${KEY}`);

    const gemini = registerRun('gemini');
    const byHeader = await post(
      '/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
      { 'x-goog-api-key': gemini.registration.token },
      { contents: [] },
    );
    const byQuery = await post(
      `/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=${gemini.registration.token}`,
      {},
      { contents: [] },
    );
    expect([byHeader.status, byQuery.status]).toEqual([200, 200]);
    for (const request of seen.slice(3)) {
      expect(request.url).toBe('/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
      expect(request.headers['x-goog-api-key']).toBe(KEY);
    }
    for (const r of [anthropic, openai, gemini]) r.registration.close();
  });

  it("does not forward an agent's trace headers: the agent cannot join or steer the platform's traces", async () => {
    const anthropic = registerRun('anthropic');
    const res = await post(
      '/anthropic/v1/messages',
      {
        'x-api-key': anthropic.registration.token,
        traceparent: '00-feedfacefeedfacefeedfacefeedface-1111111111111111-01',
        tracestate: 'agent=1',
        baggage: 'user=someone-else',
      },
      { model: 'claude-sonnet-4', stream: true },
    );
    expect(res.status).toBe(200);
    await res.text();
    expect(seen[0]!.headers.traceparent).toBeUndefined();
    expect(seen[0]!.headers.tracestate).toBeUndefined();
    expect(seen[0]!.headers.baggage).toBeUndefined();
  });

  it("allows only the run's models and its own provider", async () => {
    const { registration } = registerRun('anthropic', { models: ['claude-sonnet-4'] });
    const other = await post(
      '/anthropic/v1/messages',
      { 'x-api-key': registration.token },
      { model: 'claude-opus-4' },
    );
    expect(other.status).toBe(403);
    expect(((await other.json()) as { error: { type: string } }).error.type).toBe('model_not_allowed');
    const unnamed = await post(
      '/anthropic/v1/messages/batches',
      { 'x-api-key': registration.token },
      { requests: [] },
    );
    expect(unnamed.status).toBe(403);
    const wrongProtocol = await post(
      '/openai/responses',
      { authorization: `Bearer ${registration.token}` },
      { model: 'claude-sonnet-4' },
    );
    expect(wrongProtocol.status).toBe(403);
    expect(seen).toHaveLength(0);
    registration.close();
  });

  /** A request exactly as written (fetch would normalise `..` and `%2F` before sending). */
  const raw = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${base}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });

  // Finding 9 (#23): the run's token opened the provider's whole API with the team's key (files, batches, admin).
  it('forwards only inference: every other method and path is refused with 403, reported, and never reaches the upstream', async () => {
    const model = { claude: 'claude-sonnet-4', gpt: 'gpt-5', gemini: 'gemini-2.5-pro' };
    const attempts: Record<Provider, Array<[string, string, unknown?]>> = {
      anthropic: [
        ['GET', '/anthropic/v1/files'],
        ['GET', '/anthropic/v1/messages/batches'],
        ['POST', '/anthropic/v1/messages/batches', { model: model.claude, requests: [] }],
        ['GET', '/anthropic/v1/organizations/api_keys'],
        ['POST', '/anthropic/v1/organizations/invites', { model: model.claude, email: 'x@example.com' }],
        ['GET', '/anthropic/v1/models'],
        ['GET', '/anthropic/v1/messages'],
        ['POST', '/anthropic/v1/messages/../files', { model: model.claude }],
        ['POST', '/anthropic/v1/messages%2F..%2Ffiles', { model: model.claude }],
        ['POST', '/anthropic/v1/messages/', { model: model.claude }],
      ],
      openai: [
        ['GET', '/openai/files'],
        ['POST', '/openai/batches', { model: model.gpt, input_file_id: 'f' }],
        ['GET', '/openai/organization/admin_api_keys'],
        ['POST', '/openai/fine_tuning/jobs', { model: model.gpt, training_file: 'f' }],
        ['GET', '/openai/models'],
        ['GET', '/openai/responses/resp_1'],
      ],
      gemini: [
        ['GET', '/gemini/v1beta/files'],
        ['GET', '/gemini/v1beta/models'],
        ['POST', `/gemini/v1beta/models/${model.gemini}:batchGenerateContent`, {}],
        ['POST', '/gemini/v1beta/cachedContents', { model: `models/${model.gemini}` }],
        ['POST', '/gemini/upload/v1beta/files', {}],
        ['GET', `/gemini/v1beta/models/${model.gemini}:generateContent`],
      ],
    };
    const credential: Record<Provider, (token: string) => Record<string, string>> = {
      anthropic: (token) => ({ 'x-api-key': token }),
      openai: (token) => ({ authorization: `Bearer ${token}` }),
      gemini: (token) => ({ 'x-goog-api-key': token }),
    };
    for (const provider of ['anthropic', 'openai', 'gemini'] as const) {
      const run = registerRun(provider);
      for (const [method, path, body] of attempts[provider]) {
        const res = await raw(method, path, credential[provider](run.registration.token), body);
        expect([path, res.status]).toEqual([path, 403]);
        expect((JSON.parse(res.body) as { error: { code: string } }).error.code).toBe('not_authorized');
      }
      expect(run.refused).toHaveLength(attempts[provider].length);
      expect(run.refused[0]).toEqual({
        host: '127.0.0.1',
        port: Number(new URL(upstreamUrl).port),
        reason: expect.stringContaining(attempts[provider][0]![1]) as string,
      });
      run.registration.close();
    }
    expect(seen).toEqual([]);
  });

  it("meters tokens and cost from each protocol's SSE events and JSON bodies", async () => {
    const anthropic = registerRun('anthropic');
    await (
      await post(
        '/anthropic/v1/messages',
        { 'x-api-key': anthropic.registration.token },
        { model: 'claude-sonnet-4', stream: true },
      )
    ).text();
    await (
      await post(
        '/anthropic/v1/messages/count_tokens',
        { 'x-api-key': anthropic.registration.token },
        { model: 'claude-sonnet-4' },
      )
    ).text();
    // Input counts cache reads; output is the message_delta's running total; count_tokens is not billed.
    expect(anthropic.usage).toEqual([
      { input_tokens: 120, output_tokens: 30, cost_usd: (120 * 3 + 30 * 15) / 1e6 },
    ]);

    const openai = registerRun('openai');
    await (
      await post(
        '/openai/responses',
        { authorization: `Bearer ${openai.registration.token}` },
        { model: 'gpt-5', stream: true },
      )
    ).text();
    await (
      await post(
        '/openai/chat/completions',
        { authorization: `Bearer ${openai.registration.token}` },
        { model: 'gpt-5' },
      )
    ).text();
    expect(openai.usage.map((u) => [u.input_tokens, u.output_tokens])).toEqual([
      [200, 40],
      [7, 3],
    ]);

    const gemini = registerRun('gemini');
    await (
      await post(
        '/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
        { 'x-goog-api-key': gemini.registration.token },
        {},
      )
    ).text();
    expect(gemini.usage.map((u) => [u.input_tokens, u.output_tokens])).toEqual([[300, 20]]);
    expect(gemini.registration.spentUsd()).toBeCloseTo((300 * 3 + 20 * 15) / 1e6, 12);
    for (const r of [anthropic, openai, gemini]) r.registration.close();
  });

  it('stops a run at its budget: the exceeding response is reported once and later requests are refused', async () => {
    // One streamed message costs 0.00081 USD; the run had already spent 0.0005 of its 0.001.
    const run = registerRun('anthropic', { budgetUsd: 0.001, spentUsd: 0.0005 });
    const first = await post(
      '/anthropic/v1/messages',
      { 'x-api-key': run.registration.token },
      { model: 'claude-sonnet-4', stream: true },
    );
    await first.text();
    expect(run.exceeded).toHaveLength(1);
    expect(run.exceeded[0]).toBeCloseTo(0.0005 + 0.00081, 12);
    const next = await post(
      '/anthropic/v1/messages',
      { 'x-api-key': run.registration.token },
      { model: 'claude-sonnet-4', stream: true },
    );
    expect(next.status).toBe(403);
    expect(((await next.json()) as { error: { type: string } }).error.type).toBe('budget_exceeded');
    expect(seen).toHaveLength(1);
    run.registration.close();
  });

  it('reports a key the provider rejects', async () => {
    rejectKey = true;
    const run = registerRun('openai');
    const res = await post(
      '/openai/responses',
      { authorization: `Bearer ${run.registration.token}` },
      { model: 'gpt-5' },
    );
    expect(res.status).toBe(401);
    expect(run.rejected).toEqual([401]);
    expect(run.usage).toEqual([]);
    run.registration.close();
  });
});
