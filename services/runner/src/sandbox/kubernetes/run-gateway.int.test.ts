import { createHash } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { createLogger } from '@conveyor/logger';
import { REDIS_URL } from '@conveyor/testing';
import { ModelProxy } from '../../model-proxy/model-proxy';
import { EgressFilter } from '../egress-proxy';
import { gatewayUrls, RunGateway, type GatewayRegistration } from './run-gateway';
import { redisRunRoutes } from './run-routes';

// Two runner replicas' run gateways over real sockets and a real Redis, a real model proxy behind them, a local
// stand-in for the model provider and one for a destination on the network. Each run is known by its key alone.

const logger = createLogger({ service: 'test', level: 'silent' });
const MODEL = 'claude-test';

const listening = async (server: http.Server): Promise<number> => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
};

interface Answer {
  status: number;
  body: string;
}

/** One HTTP request to a gateway, exactly as written (path or absolute URI). */
function send(
  port: number,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
  method = body === undefined ? 'GET' : 'POST',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.end(body);
  });
}

/** A CONNECT through a gateway; on 200, one line written through the tunnel and the destination's echo read back. */
function tunnel(port: number, target: string, key?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const auth = key ? `proxy-authorization: Basic ${Buffer.from(`run:${key}`).toString('base64')}\r\n` : '';
    socket.write(`CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n${auth}\r\n`);
    let text = '';
    socket.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.startsWith('HTTP/1.1 200') && text.endsWith('\r\n\r\n')) socket.write('ping\n');
      if (text.includes('echo: ping')) socket.end();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ status: Number(text.slice(9, 12)), body: text }));
  });
}

const basic = (key: string) => ({
  'proxy-authorization': `Basic ${Buffer.from(`run:${key}`).toString('base64')}`,
});

describe('run gateway: every runner replica answers for a run, by its key alone (real sockets, real Redis)', () => {
  let redis: Redis;
  let destination: net.Server;
  let destinationPort: number;
  let web: http.Server;
  let webPort: number;
  const webSeen: http.IncomingHttpHeaders[] = [];
  let provider: http.Server;
  const providerSeen: string[] = [];
  let modelProxy: ModelProxy;
  let modelTarget: { host: string; port: number };
  const gateways: RunGateway[] = [];
  let first: RunGateway;
  let second: RunGateway;
  /** Team alpha's run on the first replica: allowed nowhere on the network. */
  let alpha: GatewayRegistration;
  let alphaToken: string;
  /** Team beta's run on the second replica: allowed to the destination and the web server. */
  let beta: GatewayRegistration;
  let betaToken: string;

  const replica = async () => {
    // Each replica names itself by the address the others reach it at, as a runner Pod names its Pod IP.
    const server = http.createServer();
    const port = await listening(server);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const gateway = await RunGateway.listen(
      { host: '127.0.0.1', port },
      redisRunRoutes(redis, `127.0.0.1:${port}`, 30_000),
      60_000,
      logger,
    );
    gateways.push(gateway);
    return gateway;
  };

  const registerModel = (runId: string) =>
    modelProxy.register({
      runId,
      provider: 'anthropic',
      apiKey: `sk-provider-${runId}`,
      models: [MODEL],
      inputUsdPerMillionTokens: 0,
      outputUsdPerMillionTokens: 0,
      budgetUsd: 0,
      spentUsd: 0,
      onUsage: () => undefined,
      onBudgetExceeded: () => undefined,
      onKeyRejected: () => undefined,
      onRefused: () => undefined,
    }).token;

  const modelCall = (port: number, key: string, token: string) =>
    send(
      port,
      `${new URL(gatewayUrls(`127.0.0.1:${port}`, key).endpoint('model-proxy')).pathname}/anthropic/v1/messages`,
      { 'x-api-key': token, 'content-type': 'application/json' },
      JSON.stringify({ model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }),
    );

  beforeAll(async () => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    destination = net.createServer((socket) => {
      socket.on('data', (d: Buffer) => socket.write(`echo: ${d.toString()}`));
      socket.on('error', () => undefined);
    });
    destination.listen(0, '127.0.0.1');
    await once(destination, 'listening');
    destinationPort = (destination.address() as AddressInfo).port;
    web = http.createServer((req, res) => {
      webSeen.push(req.headers);
      res.end('web page');
    });
    webPort = await listening(web);
    provider = http.createServer((req, res) => {
      providerSeen.push(String(req.headers['x-api-key']));
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'm1', usage: { input_tokens: 1, output_tokens: 1 } }));
    });
    const providerPort = await listening(provider);
    modelProxy = new ModelProxy(
      {
        anthropic: `http://127.0.0.1:${providerPort}`,
        openai: `http://127.0.0.1:${providerPort}/v1`,
        gemini: `http://127.0.0.1:${providerPort}`,
      },
      logger,
    );
    modelTarget = await modelProxy.listen('127.0.0.1', 0);
    first = await replica();
    second = await replica();
    alphaToken = registerModel('run_alpha');
    betaToken = registerModel('run_beta');
    alpha = await first.register({
      runId: 'run_alpha',
      egress: new EgressFilter({ allowedHosts: [], internalHosts: [] }, () => undefined),
      endpoints: [{ name: 'model-proxy', target: modelTarget }],
    });
    beta = await second.register({
      runId: 'run_beta',
      egress: new EgressFilter(
        { allowedHosts: [], internalHosts: [`127.0.0.1:${destinationPort}`, `127.0.0.1:${webPort}`] },
        () => undefined,
      ),
      endpoints: [{ name: 'model-proxy', target: modelTarget }],
    });
  });

  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close().catch(() => undefined)));
    await modelProxy.close();
    for (const server of [destination, web, provider]) server.close();
    redis.disconnect();
  });

  it("serves a run's egress and model access on any replica: the one holding it, and the other by passing it on", async () => {
    for (const gateway of [second, first]) {
      const tunnelled = await tunnel(gateway.port, `127.0.0.1:${destinationPort}`, beta.key);
      expect(tunnelled.status).toBe(200);
      expect(tunnelled.body).toContain('echo: ping');
      expect(await modelCall(gateway.port, beta.key, betaToken)).toMatchObject({ status: 200 });
    }
    expect(await modelCall(second.port, alpha.key, alphaToken)).toMatchObject({ status: 200 });
    expect(providerSeen).toEqual(expect.arrayContaining(['sk-provider-run_beta', 'sk-provider-run_alpha']));
  });

  it("never passes the run's key on to the destination of a plain-HTTP request", async () => {
    const page = await send(first.port, `http://127.0.0.1:${webPort}/page`, basic(beta.key));
    expect(page).toEqual({ status: 200, body: 'web page' });
    expect(webSeen.at(-1)).not.toHaveProperty('proxy-authorization');
  });

  it("refuses one run's key the other run's egress grant, on either replica", async () => {
    for (const gateway of [first, second]) {
      const refused = await tunnel(gateway.port, `127.0.0.1:${destinationPort}`, alpha.key);
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('egress denied');
      const page = await send(gateway.port, `http://127.0.0.1:${webPort}/page`, basic(alpha.key));
      expect(page.status).toBe(403);
    }
  });

  it("refuses another team's run the use of this run's model token through its own key", async () => {
    const seen = providerSeen.length;
    for (const gateway of [first, second]) {
      const refused = await modelCall(gateway.port, alpha.key, betaToken);
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body)).toMatchObject({ error: { type: 'authentication_error' } });
    }
    expect(providerSeen).toHaveLength(seen);
  });

  it('refuses a request without a key, or with a key no run has', async () => {
    expect((await tunnel(first.port, `127.0.0.1:${destinationPort}`)).status).toBe(407);
    expect((await tunnel(second.port, `127.0.0.1:${destinationPort}`, 'cvk_guessed')).status).toBe(407);
    expect((await send(first.port, `http://127.0.0.1:${webPort}/page`)).status).toBe(407);
    const bare = await send(second.port, '/anthropic/v1/messages', { 'x-api-key': betaToken }, '{}');
    expect(bare.status).toBe(401);
    expect(JSON.parse(bare.body)).toMatchObject({
      status: 401,
      type: expect.stringMatching(/\/authentication_required$/),
    });
    expect((await modelCall(first.port, 'cvk_guessed', betaToken)).status).toBe(401);
  });

  it('stops answering for a run once its registration is closed, everywhere', async () => {
    const gamma = await first.register({
      runId: 'run_gamma',
      egress: new EgressFilter(
        { allowedHosts: [], internalHosts: [`127.0.0.1:${destinationPort}`] },
        () => undefined,
      ),
      endpoints: [],
    });
    expect((await tunnel(second.port, `127.0.0.1:${destinationPort}`, gamma.key)).status).toBe(200);
    await gamma.close();
    for (const gateway of [first, second])
      expect((await tunnel(gateway.port, `127.0.0.1:${destinationPort}`, gamma.key)).status).toBe(407);
  });

  it("lets a replica taken over while alive drop the run on its own gateway only: the adopter's route stays", async () => {
    const reaching = (destinations: string[]) =>
      new EgressFilter({ allowedHosts: [], internalHosts: destinations }, () => undefined);
    const destinationAddress = `127.0.0.1:${destinationPort}`;
    // The first holder's grant reaches nothing; the adopter registers under the key the run's Pod already holds.
    const old = await first.register({ runId: 'run_epsilon', egress: reaching([]), endpoints: [] });
    await second.register(
      { runId: 'run_epsilon', egress: reaching([destinationAddress]), endpoints: [] },
      old.key,
    );
    const digest = createHash('sha256').update(old.key).digest('hex');
    const holder = () => redis.get(`conveyor:run-gateway:${digest}`);
    expect(await holder()).toBe(`127.0.0.1:${second.port}`);

    // Partitioned, the old holder does not know yet: its renewal leaves the adopter's route alone.
    await first.renew();
    expect(await holder()).toBe(`127.0.0.1:${second.port}`);
    // Told `conflict`, it lets go: the run is no longer served there, and its route is neither renewed nor dropped.
    old.forget();
    await first.renew();
    expect(await holder()).toBe(`127.0.0.1:${second.port}`);
    const through = await tunnel(first.port, destinationAddress, old.key);
    expect(through.status).toBe(200);
    expect(through.body).toContain('echo: ping');
  });

  it('answers a retryable 503 while the replica named as holder cannot be reached', async () => {
    const third = await replica();
    const delta = await third.register({
      runId: 'run_delta',
      egress: new EgressFilter({ allowedHosts: [], internalHosts: [] }, () => undefined),
      endpoints: [{ name: 'model-proxy', target: modelTarget }],
    });
    // The replica goes without dropping its runs, as a runner Pod killed outright does.
    await third.close();
    const answer = await modelCall(first.port, delta.key, 'any');
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toMatchObject({
      retryable: true,
      type: expect.stringMatching(/\/resource_unavailable$/),
    });
  });
});
