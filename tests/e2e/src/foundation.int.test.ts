import { startPlatform, type RunningPlatform } from './platform';

describe('foundation: three services over real sockets', () => {
  let platform: RunningPlatform;

  beforeAll(async () => {
    platform = await startPlatform();
  });

  afterAll(async () => {
    await platform?.stop();
  });

  const get = (path: string, key?: string) =>
    fetch(`${platform.apiUrl}${path}`, { headers: key ? { Authorization: `Bearer ${key}` } : {} });

  it('lists runs for an authenticated caller', async () => {
    const res = await get('/agent/runs', platform.apiKey);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(await res.json()).toEqual({ runs: [], page_info: { has_next_page: false } });
  });

  it('answers 401 in the contract error shape without a key, with a bad key and with a malformed header', async () => {
    for (const res of [
      await get('/agent/runs'),
      await get('/agent/runs', `${platform.apiKey}x`),
      await fetch(`${platform.apiUrl}/agent/runs`, { headers: { Authorization: 'Basic abc' } }),
    ]) {
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        type: 'https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/authentication_required',
        title: 'Authentication required',
        status: 401,
        retryable: false,
      });
      expect(typeof body.error).toBe('string');
    }
  });

  it('answers 404 in the error shape for unknown routes', async () => {
    const res = await get('/no/such/route', platform.apiKey);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      status: 404,
      type: expect.stringMatching(/resource_not_found$/),
    });
    const outside = await fetch(platform.apiUrl.replace('/v1', '/nope'));
    expect(outside.status).toBe(404);
  });

  it('answers 400 for a malformed JSON body', async () => {
    const res = await fetch(`${platform.apiUrl}/agent/runs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${platform.apiKey}`, 'Content-Type': 'application/json' },
      body: '{"prompt": ',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ status: 400, type: expect.stringMatching(/invalid_request$/) });
  });

  it('validates list parameters', async () => {
    const res = await get('/agent/runs?limit=0', platform.apiKey);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/limit/);
  });

  it('serves Prometheus metrics with the documented names on every service', async () => {
    await get('/agent/runs', platform.apiKey);
    const scrape = async (base: string) => {
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      return res.text();
    };
    const gateway = await scrape(platform.apiUrl.replace('/v1', ''));
    expect(gateway).toMatch(
      /^http_requests_total\{method="GET",route="\/v1\/agent\/runs",status="200",service="gateway"\} \d+$/m,
    );
    const ingress = await scrape(platform.ingressUrl);
    expect(ingress).toContain(
      'conveyor_webhook_deliveries_total{label="Rejected (invalid JSON)",service="ingress"}',
    );
    const orchestrator = await scrape(platform.orchestratorHttpUrl);
    expect(orchestrator).toContain('# TYPE conveyor_kafka_consumer_lag gauge');
    for (const [service, text] of Object.entries({ gateway, ingress, orchestrator })) {
      for (const name of [
        'http_requests_total',
        'http_request_errors_total',
        'http_request_duration_seconds',
        'process_cpu_user_seconds_total',
      ]) {
        expect(text).toContain(`# TYPE ${name} `);
      }
      expect(text).toContain(`service="${service}"`);
    }
  });

  it('exposes health and readiness on every service', async () => {
    for (const base of [platform.apiUrl.replace('/v1', ''), platform.ingressUrl]) {
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ready' });
    }
  });
});
