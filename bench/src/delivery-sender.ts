import type { SignedRequest, SentAnswer } from './integration-latency';

/**
 * The integration benchmarks' load generator, in its own process (as autocannon-worker is for the HTTP benchmarks):
 * posts each request its parent sends over IPC and answers with the status, so the process that times the trials
 * (and holds the scripted provider) spends no CPU on the HTTP client.
 */
process.on('message', (message: { id: number; request: SignedRequest }) => {
  const { id, request } = message;
  void fetch(request.url, { method: 'POST', headers: request.headers, body: request.body }).then(
    async (res): Promise<void> => {
      const answer: SentAnswer = { status: res.status, text: await res.text() };
      process.send!({ id, answer });
    },
    (err: unknown) => process.send!({ id, answer: { status: 0, text: String(err) } }),
  );
});
