import type { AddressInfo } from 'node:net';
import express from 'express';

/** The create-run benchmark's baseline: express parsing the same JSON body and answering like the gateway. */
const app = express();
app.use(express.json());
app.post('/v1/agent/runs', (req, res) => {
  res.json({ run_id: 'bare', task_id: 'bare', state: 'QUEUED', echo: Boolean(req.body) });
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
