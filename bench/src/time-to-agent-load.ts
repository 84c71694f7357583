/**
 * The time-to-agent benchmark's load generator, in its own process: asked over IPC for one HTTP request, it stamps
 * the time just before sending it (epoch ms) and answers with that, the status and the JSON body.
 */
process.on(
  'message',
  (message: { id: number; url: string; headers: Record<string, string>; body: unknown }) => {
    const sentAt = Date.now();
    void fetch(message.url, { method: 'POST', headers: message.headers, body: JSON.stringify(message.body) })
      .then(async (res) => {
        const text = await res.text();
        process.send!({ id: message.id, sentAt, status: res.status, body: text ? JSON.parse(text) : null });
      })
      .catch((err: unknown) => process.send!({ id: message.id, sentAt, status: 0, body: String(err) }));
  },
);
process.on('disconnect', () => process.exit(0));
