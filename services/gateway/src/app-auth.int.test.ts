import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Redis } from 'ioredis';
import { REDIS_URL } from '@conveyor/testing';
import { ENDPOINTS } from './routes/endpoints';
import { testApp } from './test-support/test-app';

const concrete = (path: string) => `/v1${path.replace(/:([A-Za-z0-9_]+)/g, 'x1')}`;
const row = (e: (typeof ENDPOINTS)[number]) => [e.method.toUpperCase(), e.path] as const;

describe('the app places every endpoint by its `auth` (real Redis for the rate limits)', () => {
  const redis = new Redis(REDIS_URL);
  const { app, api } = testApp(redis);
  let server: Server;
  let base = '';
  beforeAll(async () => {
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    api.close();
    await redis.quit();
  });

  it.each(ENDPOINTS.filter((e) => e.auth === 'api_key').map(row))(
    'answers %s %s without a key with 401',
    async (method, path) => {
      const res = await fetch(`${base}${concrete(path)}`, { method });
      expect(res.status).toBe(401);
    },
  );

  it.each(ENDPOINTS.filter((e) => e.auth !== 'api_key').map(row))(
    'lets %s %s through without a key',
    async (method, path) => {
      const res = await fetch(`${base}${concrete(path)}`, { method });
      expect(res.status).not.toBe(401);
    },
  );
});
