import { startScriptedModelServer } from '@conveyor/testing';

/**
 * The scripted Anthropic model server of the time-to-agent benchmark, in its own process so that answering the CLI
 * never waits on the benchmark's own work. Every agent turn gets the script-exhausted text answer (the run ends after
 * one turn). Asked `{ after }` over IPC, it answers with the arrival time (epoch ms) of the first agent turn (a request
 * offering tools: the CLI's first real model call, not a side request such as a title) received at or after that time,
 * or null. Side requests are left out because the runner's model proxy refuses those for another model than the run's.
 */
async function main(): Promise<void> {
  const server = await startScriptedModelServer();
  process.on('message', (message: { after: number; id: number }) => {
    const first = server.requests.find((r) => r.scripted && r.receivedAt >= message.after);
    process.send!({ id: message.id, at: first?.receivedAt ?? null, url: first?.url ?? null });
  });
  process.on('disconnect', () => void server.close().finally(() => process.exit(0)));
  process.send!({ url: server.url });
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
