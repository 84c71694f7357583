import type { Logger } from '@conveyor/logger';

/** The cleanup step closeAll is waiting on: a shutdown that times out names it. */
let pendingStep: string | undefined;

export interface Service {
  start(): Promise<void>;
  /** Idempotent: readiness off, intake stopped, in-flight work drained, connections closed. */
  stop(): Promise<void>;
}

/**
 * Starts a service and wires SIGTERM/SIGINT to a single graceful stop with a forced-exit deadline,
 * so a stuck drain can never keep a pod (or `npm start`) hanging.
 */
export async function runService(
  service: Service,
  logger: Logger,
  shutdownTimeoutMs: number,
  /** Run after a graceful stop, before exiting (the tracer's buffered spans); its failure is only logged. */
  flush: () => Promise<void> = async () => undefined,
): Promise<void> {
  let stopping = false;
  // Logging must never stop a shutdown: when the log pipe is gone (its reader died with the terminal), writes throw.
  const log = (write: () => void): void => {
    try {
      write();
    } catch {
      // nowhere left to report to
    }
  };
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => {
      log(() => logger.error({ shutdownTimeoutMs, pendingStep }, 'graceful shutdown timed out; exiting'));
      process.exit(1);
    }, shutdownTimeoutMs + 2000);
    force.unref();
    log(() => logger.info({ signal }, 'shutting down'));
    service
      .stop()
      .then(() =>
        flush().catch((err: unknown) => log(() => logger.warn({ err }, 'flush on shutdown failed'))),
      )
      .then(() => {
        log(() => logger.info('stopped'));
        // Non-zero when the stop was a failure's (a service that lost what it needs sets exitCode), so a supervisor restarts it.
        process.exit();
      })
      .catch((err: unknown) => {
        log(() => logger.error({ err }, 'error during shutdown'));
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  try {
    await service.start();
  } catch (err) {
    logger.fatal({ err }, 'failed to start');
    await service.stop().catch(() => undefined);
    process.exit(1);
  }
}

/** Runs each cleanup step in its own try/catch so one failure never skips the others. */
export async function closeAll(
  logger: Logger,
  steps: Array<[string, () => Promise<unknown> | unknown]>,
): Promise<void> {
  for (const [name, step] of steps) {
    pendingStep = name;
    try {
      await step();
    } catch (err) {
      logger.warn({ err, step: name }, 'cleanup step failed');
    }
  }
  pendingStep = undefined;
}
