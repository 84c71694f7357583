import type { EventEmitter } from 'node:events';
import type { Logger } from '@conveyor/logger';
import { OutageLog } from './background-loop';

/**
 * Logs a client connection's outage once and its recovery once: an ioredis client emits `error` at every failed
 * reconnection attempt (every ~2 s for as long as Redis is away) and `ready` when it is back. Listening to `error`
 * is also what keeps such an event from ending the process.
 */
export function logConnectionOutages(
  client: Pick<EventEmitter, 'on'>,
  logger: Logger,
  connection: string,
  dependency = 'redis',
): OutageLog {
  const outage = new OutageLog(logger, { loop: connection, dependency }, { connection: true });
  client.on('error', (err: unknown) => outage.failed(err));
  client.on('ready', () => outage.succeeded());
  return outage;
}
