import { startScriptedModelServer } from '@conveyor/testing';

/**
 * The scripted Anthropic model server of the time-to-agent benchmark, in its own process so that answering the CLI
 * never waits on the benchmark's own work. Every agent turn gets the script-exhausted text answer (the run ends after
 * one turn). Asked `{ after }` over IPC, it answers with the arrival time (epoch ms) of the first agent turn (a request
 * offering tools: the CLI's first real model call, not a side request such as a title) received at or after that time,
 * or null; asked `{ after, all: true }`, with the arrival times of every such turn since then (`all`). Side requests are
 * left out because the runner's model proxy refuses those for another model than the run's. MODEL_SERVER_HOST and
 * MODEL_SERVER_PORT place it where a cluster's run Pods reach it (the Kubernetes benchmark).
 */
async function main(): Promise<void> {
  const server = await startScriptedModelServer([], {
    ...(process.env.MODEL_SERVER_HOST ? { host: process.env.MODEL_SERVER_HOST } : {}),
    ...(process.env.MODEL_SERVER_PORT ? { port: Number(process.env.MODEL_SERVER_PORT) } : {}),
  });
  process.on('message', (message: { after: number; id: number; all?: boolean }) => {
    const turns = server.requests.filter((r) => r.scripted && r.receivedAt >= message.after);
    process.send!({
      id: message.id,
      at: turns[0]?.receivedAt ?? null,
      url: turns[0]?.url ?? null,
      ...(message.all ? { all: turns.map((r) => r.receivedAt) } : {}),
    });
  });
  process.on('disconnect', () => void server.close().finally(() => process.exit(0)));
  process.send!({ url: server.url });
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
