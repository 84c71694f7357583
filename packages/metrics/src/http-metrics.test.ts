import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { httpMetrics } from './http-metrics';
import { createMetricsRegistry, type Registry } from './metrics-registry';
import { metricsRouter } from './metrics-router';

describe('httpMetrics', () => {
  let registry: Registry;
  let server: Server;
  let base: string;

  beforeEach(async () => {
    registry = createMetricsRegistry('test-service', { defaultMetrics: false });
    const app = express();
    app.use(httpMetrics(registry));
    app.use(metricsRouter(registry));
    app.get('/healthz', (_req, res) => {
      res.json({ status: 'ok' });
    });
    const v1 = Router();
    v1.get('/items/:id', (req, res) => {
      res.json({ id: req.params.id });
    });
    v1.get('/boom', () => {
      throw new Error('boom');
    });
    v1.post('/slow', (_req, res) => {
      setTimeout(() => res.status(201).end(), 20);
    });
    app.use('/v1', v1);
    app.use((_req: Request, res: Response) => {
      res.status(404).end();
    });
    app.use((_err: unknown, _req: Request, res: Response, _next: NextFunction) => {
      res.status(500).end();
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const values = async (name: string) =>
    (await registry.getSingleMetric(name)!.get()).values as Array<{
      value: number;
      labels: Record<string, unknown>;
      metricName?: string;
    }>;

  it('labels requests with the matched route pattern, not the raw URL', async () => {
    expect((await fetch(`${base}/v1/items/1`)).status).toBe(200);
    expect((await fetch(`${base}/v1/items/2`)).status).toBe(200);
    expect((await fetch(`${base}/v1/slow`, { method: 'POST' })).status).toBe(201);

    expect(await values('http_requests_total')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          value: 2,
          labels: { method: 'GET', route: '/v1/items/:id', status: '200' },
        }),
        expect.objectContaining({ value: 1, labels: { method: 'POST', route: '/v1/slow', status: '201' } }),
      ]),
    );
    const count = (await values('http_request_duration_seconds')).find(
      (v) => v.metricName === 'http_request_duration_seconds_count' && v.labels.route === '/v1/slow',
    );
    expect(count?.value).toBe(1);
    const sum = (await values('http_request_duration_seconds')).find(
      (v) => v.metricName === 'http_request_duration_seconds_sum' && v.labels.route === '/v1/slow',
    );
    expect(sum?.value).toBeGreaterThanOrEqual(0.015);
  });

  it('labels requests no route matched as "unmatched"', async () => {
    expect((await fetch(`${base}/no/such/thing/42`)).status).toBe(404);
    expect(await values('http_requests_total')).toEqual([
      expect.objectContaining({ value: 1, labels: { method: 'GET', route: 'unmatched', status: '404' } }),
    ]);
  });

  it('keeps the route (with its mount prefix) when an error handler answers, and counts the error', async () => {
    expect((await fetch(`${base}/v1/boom`)).status).toBe(500);
    const labels = { method: 'GET', route: '/v1/boom', status: '500' };
    expect(await values('http_requests_total')).toEqual([expect.objectContaining({ value: 1, labels })]);
    expect(await values('http_request_errors_total')).toEqual([
      expect.objectContaining({ value: 1, labels }),
    ]);
  });

  it('does not record probes or scrapes, and serves the registry with the service label', async () => {
    await fetch(`${base}/healthz`);
    await fetch(`${base}/v1/items/7`);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text).toContain(
      'http_requests_total{method="GET",route="/v1/items/:id",status="200",service="test-service"} 1',
    );
    expect(text).not.toContain('route="/healthz"');
    expect(text).not.toContain('route="/metrics"');
  });
});
