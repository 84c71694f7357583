import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runKeyRoutes } from '../execution/run-policy';
import { SocketBridge } from './socket-bridge';

/** A request exactly as written (fetch would normalise `..` before sending). */
const send = (port: number, method: string, path: string, body?: string) =>
  new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: text }),
      );
    });
    req.end(body);
  });

describe('the harness-support bridge forwards only the routes a run-scoped key may use', () => {
  let gateway: http.Server;
  let bridge: SocketBridge;
  const seen: string[] = [];

  beforeAll(async () => {
    // Stands in for the gateway: records every request that reaches it and echoes the body.
    gateway = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${body}`);
        res.writeHead(201, { 'content-type': 'application/json', 'x-request-id': 'r1' });
        res.end(JSON.stringify({ echoed: body }));
      });
    });
    gateway.listen(0, '127.0.0.1');
    await once(gateway, 'listening');
    const target = { host: '127.0.0.1', port: (gateway.address() as AddressInfo).port };
    bridge = await SocketBridge.listen(
      { host: '127.0.0.1', port: 0 },
      { name: 'harness-support', target, routes: runKeyRoutes('/v1') },
    );
  });

  afterAll(async () => {
    await bridge.close();
    gateway.close();
  });

  it('forwards harness support and judge scores, body and answer unchanged', async () => {
    const artifact = await send(bridge.port, 'POST', '/v1/harness-support/report-artifact', '{"a":1}');
    expect(artifact).toEqual({ status: 201, type: 'application/json', body: '{"echoed":"{\\"a\\":1}"}' });
    const score = await send(bridge.port, 'POST', '/v1/agent/runs/6f1c-42/scores', '{}');
    expect(score.status).toBe(201);
    expect(seen).toEqual([
      'POST /v1/harness-support/report-artifact {"a":1}',
      'POST /v1/agent/runs/6f1c-42/scores {}',
    ]);
  });

  it('refuses everything else with 403 in the problem shape, without contacting the gateway', async () => {
    seen.length = 0;
    for (const [method, path] of [
      ['GET', '/metrics'],
      ['GET', '/console'],
      ['GET', '/v1/openapi.json'],
      ['GET', '/healthz'],
      ['GET', '/v1/agent/runs'],
      ['POST', '/v1/agent/runs'],
      ['GET', '/v1/harness-support/report-artifact'],
      ['POST', '/v1/harness-support/../agent/runs'],
      ['POST', '/v1/harness-support/report-artifact%2F..%2F..%2Fagent'],
      ['POST', '/v1/agent/runs/x/scores/../cancel'],
    ] as const) {
      const res = await send(bridge.port, method, path);
      expect([path, res.status, res.type]).toEqual([path, 403, 'application/problem+json']);
      expect(JSON.parse(res.body)).toMatchObject({
        status: 403,
        type: expect.stringMatching(/not_authorized$/),
      });
    }
    expect(seen).toEqual([]);
  });
});
