import { startPlatform, type RunningPlatform } from './platform';
import { apiCall } from './run-waits';

const status = async (url: string) => (await fetch(url)).status;

/** Polls `check` until it holds; fails with the services' logs after 30 s. */
async function until(platform: RunningPlatform, what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not happen\n${platform.logs().slice(-4000)}`);
}

// Issue #36: the readiness probe of the edge (gateway, ingress) reports only its own replica. Every replica shares the
// orchestrator, so a probe that followed it would empty their Service at once (connection refused) where each
// replica should answer 503 in the contract's shape.
describe('edge readiness during an orchestrator outage', () => {
  let platform: RunningPlatform;

  beforeAll(async () => {
    platform = await startPlatform();
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it("keeps the probe's endpoint ready, answers the API with a retryable 503, and /readyz still shows the outage", async () => {
    const gateway = new URL(platform.apiUrl).origin;
    expect(await status(`${gateway}/readyz`)).toBe(200);

    platform.kill('orchestrator', 'SIGKILL');
    await until(platform, 'gateway /readyz 503', async () => (await status(`${gateway}/readyz`)) === 503);

    expect(await status(`${gateway}/readyz/local`)).toBe(200);
    expect(await status(`${platform.ingressUrl}/readyz/local`)).toBe(200);
    const report = (await (await fetch(`${gateway}/readyz`)).json()) as {
      checks: Record<string, { ok: boolean }>;
    };
    expect(report.checks.orchestrator?.ok).toBe(false);

    const listed = await apiCall(platform, 'GET', '/agent/runs');
    expect(listed.status).toBe(503);
    expect(listed.headers.get('content-type')).toContain('application/problem+json');
    expect(listed.body).toMatchObject({ status: 503, retryable: true });
    expect(listed.body.type).toMatch(/\/resource_unavailable$/);
    expect(Number(listed.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(JSON.stringify(listed.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|at .*\.js/);

    await platform.restartOrchestrator();
    await until(platform, 'gateway /readyz 200', async () => (await status(`${gateway}/readyz`)) === 200);
    expect((await apiCall(platform, 'GET', '/agent/runs')).status).toBe(200);
  });
});
