import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GitSkillScanner } from '../catalog/git-skill-scanner';
import { EgressPolicy } from './egress-policy';
import { planGitFetch } from './git-egress';

/** A plain HTTP server that records what git asks it and answers 404 (it is not a repository). */
describe('git through the egress plan, against a real git and a real socket', () => {
  let server: Server;
  let port: number;
  const seen: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const scanner = (allowed: string[]) =>
    new GitSkillScanner((url) =>
      planGitFetch(url, { policy: new EgressPolicy(allowed), allowedSchemes: ['http'], allowLocal: false }),
    );

  it('refused by default: git never connects', async () => {
    await expect(scanner([]).headCommit(`http://localhost:${port}/acme/api.git`)).rejects.toThrow(
      /may not reach/,
    );
    await expect(scanner([]).headCommit(`http://127.0.0.1:${port}/acme/api.git`)).rejects.toThrow(
      /may not reach/,
    );
    expect(seen).toHaveLength(0);
  });

  it('allow-listed: git connects to the pinned address with the name in Host', async () => {
    await expect(
      scanner([`127.0.0.0/8:${port}`, `[::1]:${port}`]).headCommit(`http://localhost:${port}/acme/api.git`),
    ).rejects.toThrow(/git ls-remote failed/);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]!.host).toBe(`localhost:${port}`);
  });
});
