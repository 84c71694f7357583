import type { AddressInfo } from 'node:net';
import express from 'express';

/**
 * The API benchmark's baseline, in its own process: express parsing the same JSON body and answering with a body
 * of the gateway's shape. GET answers with BENCH_LIST_BODY, the gateway's real first page captured by the benchmark,
 * so both serialize and send the same bytes.
 */
const listBody = JSON.parse(process.env.BENCH_LIST_BODY ?? '{"runs":[]}') as unknown;
const app = express();
app.use(express.json());
app.post('/v1/agent/runs', (req, res) => {
  res.json({ run_id: 'bare', task_id: 'bare', state: 'QUEUED', echo: Boolean(req.body) });
});
app.get('/v1/agent/runs', (_req, res) => {
  res.json(listBody);
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
