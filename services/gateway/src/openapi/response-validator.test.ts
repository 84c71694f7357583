import type { AddressInfo } from 'node:net';
import express from 'express';
import { createLogger } from '@conveyor/logger';
import { requestContext } from '@conveyor/runtime';
import { validateResponses } from './response-validator';

/** A handler that sends what the document does not promise gets a 500 instead of reaching the client. */
describe('validateResponses', () => {
  const app = express();
  app.use(requestContext(createLogger({ service: 'test', level: 'silent' })));
  app.use(validateResponses());
  app.get('/v1/agent/runs/:runId/handoff/attachments', (req, res) => {
    if (req.params.runId === 'good')
      res.json({ attachments: [{ attachment_id: 'a', download_url: 'u', filename: 'f' }] });
    else res.json({ attachments: [{ attachment_id: 'a' }] });
  });
  app.get('/v1/agent/runs/:runId/timeline', (_req, res) =>
    res.status(201).json({ run_id: 'r1', events: [] }),
  );
  app.get('/v1/not-documented', (_req, res) => res.json({}));
  let server: ReturnType<typeof app.listen>;
  const base = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  beforeAll(() => new Promise<void>((resolve) => (server = app.listen(0, '127.0.0.1', () => resolve()))));
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('lets a conforming body through', async () => {
    const res = await fetch(`${base()}/v1/agent/runs/good/handoff/attachments`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      attachments: [{ attachment_id: 'a', download_url: 'u', filename: 'f' }],
    });
  });

  it('turns a body missing required fields into a 500 naming them', async () => {
    const res = await fetch(`${base()}/v1/agent/runs/bad/handoff/attachments`);
    expect(res.status).toBe(500);
    const body = (await res.json()) as { detail: string };
    expect(body.detail).toMatch(/attachments\.0\.download_url/);
    expect(body.detail).toMatch(/attachments\.0\.filename/);
  });

  it('rejects undocumented statuses and undocumented operations', async () => {
    expect((await fetch(`${base()}/v1/agent/runs/r1/timeline`)).status).toBe(500);
    expect((await fetch(`${base()}/v1/not-documented`)).status).toBe(500);
  });
});
