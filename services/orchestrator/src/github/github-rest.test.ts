import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EgressPolicy } from '../egress/egress-policy';
import { githubRequest } from './github-rest';

// GITHUB_API_URL obeys the egress rules of git fetches: a loopback API is reached only when allow-listed.
describe('githubRequest egress', () => {
  const server = createServer((_req, res) => res.writeHead(200).end('{"ok":true}'));
  let baseUrl: string;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('refuses an API base URL on a loopback address that is not allow-listed', async () => {
    const api = { baseUrl, policy: new EgressPolicy([]), timeoutMs: 5000 };
    await expect(githubRequest(api, 't', 'GET', '/repos/a/b')).rejects.toThrow(
      /may not reach on port \d+ \(127.0.0.1\).*EGRESS_ALLOWED_ADDRESSES/,
    );
  });

  it('reaches it when EGRESS_ALLOWED_ADDRESSES allows it', async () => {
    const api = { baseUrl, policy: new EgressPolicy([new URL(baseUrl).host]), timeoutMs: 5000 };
    await expect(githubRequest(api, 't', 'GET', '/repos/a/b')).resolves.toEqual({
      status: 200,
      body: { ok: true },
      items: [],
    });
  });
});
