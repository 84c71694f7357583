import { type EventEndpoint, type PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { BackgroundLoop } from '@conveyor/runtime';
import type { SecretCipher } from '../secrets/secret-cipher';
import { buildEventBody } from './event-body';
import { sendEvent, type SendResult } from './event-sender';
import { signingSecrets } from './endpoint-secret';
import { parseEndpointUrl, resolveEndpoint, type EndpointUrlRules } from './endpoint-url';
import { nextAttemptDelay } from './retry-schedule';
import { signEvent } from './sign-event';

export interface EventDispatcherOptions {
  db: PrismaClient;
  cipher: SecretCipher;
  urls: EndpointUrlRules;
  logger: Logger;
  /** PUBLIC_API_BASE_URL: events link to the run's console page. */
  publicApiBaseUrl: string;
  /** EVENT_RETRY_SCHEDULE_MS. */
  schedule: readonly number[];
  timeoutMs: number;
  /** An endpoint failing for this long is disabled. */
  disableAfterMs: number;
  /** Attempts in flight per endpoint in this process. */
  concurrency: number;
  intervalMs: number;
}

/** Deliveries claimed per pass. */
const CLAIM_BATCH = 200;

interface Claimed {
  id: bigint;
  eventId: string;
  endpointId: string;
  attempts: number;
}

/**
 * Delivers outbound events (docs/events.md). Deliveries are rows written with the change that caused them; a pass
 * claims the due ones by pushing their `nextAttemptAt` past the attempt's timeout (a lease: a crashed orchestrator's
 * claims come due again, so every event is delivered at least once across restarts, and replicas share the work
 * through SKIP LOCKED). Only the oldest pending delivery of a run per endpoint is due, so one endpoint sees one run's
 * events in the order they happened. Attempts run without the pass waiting for them, at most `concurrency` per
 * endpoint: a slow or dead endpoint fills its own slots and nobody else's.
 */
export class EventDispatcher {
  readonly loop: BackgroundLoop;
  private readonly inFlight = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();

  constructor(private readonly options: EventDispatcherOptions) {
    this.loop = new BackgroundLoop({
      name: 'event dispatcher',
      dependency: 'postgres',
      intervalMs: options.intervalMs,
      run: () => this.dispatch(),
      logger: options.logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  /** A pass now (an event was written); never rejects. */
  kick(): Promise<void> {
    return this.loop.trigger();
  }

  /** Stops claiming, then waits for the attempts in flight (each ends within the timeout). */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.settled();
  }

  /** Resolves once the attempts started so far have ended and been recorded. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.attempts]);
  }

  /** Claims what is due and starts its attempts; resolves once they are started, not finished. */
  async dispatch(): Promise<number> {
    const { concurrency, timeoutMs } = this.options;
    const busy = [...this.inFlight].filter(([, n]) => n >= concurrency).map(([id]) => id);
    const used = JSON.stringify(Object.fromEntries(this.inFlight));
    const leaseMs = timeoutMs + 30_000;
    const claimed = await this.options.db.$queryRaw<Claimed[]>`
      WITH candidates AS (
        SELECT d.id, d."endpointId", d."nextAttemptAt"
          FROM "EventDelivery" d
         WHERE d.status = 'pending' AND d."nextAttemptAt" <= now()
           AND NOT (d."endpointId" = ANY(${busy}::text[]))
           AND EXISTS (SELECT 1 FROM "EventEndpoint" e WHERE e.id = d."endpointId" AND e.enabled)
           AND NOT EXISTS (SELECT 1 FROM "EventDelivery" p
                            WHERE p."endpointId" = d."endpointId" AND p."runId" = d."runId"
                              AND p.status = 'pending' AND p.id < d.id)
         ORDER BY d."nextAttemptAt", d.id
         LIMIT ${CLAIM_BATCH}
           FOR UPDATE OF d SKIP LOCKED
      ), ranked AS (
        SELECT id, "endpointId",
               row_number() OVER (PARTITION BY "endpointId" ORDER BY "nextAttemptAt", id) AS n
          FROM candidates
      )
      UPDATE "EventDelivery" d
         SET "nextAttemptAt" = now() + make_interval(secs => ${leaseMs / 1000})
        FROM ranked
       WHERE d.id = ranked.id
         AND ranked.n <= ${concurrency} - COALESCE((${used}::jsonb ->> ranked."endpointId")::int, 0)
      RETURNING d.id, d."eventId", d."endpointId", d.attempts`;
    for (const delivery of claimed) {
      this.inFlight.set(delivery.endpointId, (this.inFlight.get(delivery.endpointId) ?? 0) + 1);
      const attempt = this.attempt(delivery)
        .catch((err: unknown) =>
          this.options.logger.error(
            { err, deliveryId: String(delivery.id), endpointId: delivery.endpointId },
            'event delivery attempt could not be recorded; its lease will expire and it is retried',
          ),
        )
        .finally(() => {
          const left = (this.inFlight.get(delivery.endpointId) ?? 1) - 1;
          if (left > 0) this.inFlight.set(delivery.endpointId, left);
          else this.inFlight.delete(delivery.endpointId);
          this.attempts.delete(attempt);
          // The run's next event for this endpoint, or a slot another delivery waits for.
          void this.loop.trigger();
        });
      this.attempts.add(attempt);
    }
    return claimed.length;
  }

  private async attempt(delivery: Claimed): Promise<void> {
    const { db, cipher, urls } = this.options;
    const [endpoint, event] = await Promise.all([
      db.eventEndpoint.findUnique({ where: { id: delivery.endpointId } }),
      db.outboundEvent.findUnique({ where: { id: delivery.eventId } }),
    ]);
    if (!endpoint || !event || !endpoint.enabled) return;
    let body = event.body;
    if (body === null) {
      body = await buildEventBody(db, event, this.options.publicApiBaseUrl);
      // The first body built is the one every attempt sends, even if two orchestrators built one at once.
      await db.outboundEvent.updateMany({ where: { id: event.id, body: null }, data: { body } });
      body = (await db.outboundEvent.findUniqueOrThrow({ where: { id: event.id } })).body!;
    }
    const now = new Date();
    let result: SendResult;
    try {
      const url = parseEndpointUrl(endpoint.url, urls);
      // Resolved again at every attempt: what the name pointed at when the endpoint was saved proves nothing now.
      const [address] = await resolveEndpoint(url, urls);
      const headers = signEvent(event.id, body, signingSecrets(cipher, endpoint, now), now);
      result = await sendEvent(url, address!, headers, body, this.options.timeoutMs);
    } catch (err) {
      result = { error: err instanceof Error ? err.message : String(err), latencyMs: 0 };
    }
    await this.record(delivery, endpoint, result, now);
  }

  /** The attempt's row, the delivery's next state, and the endpoint's health, in one transaction. */
  private async record(
    delivery: Claimed,
    endpoint: EventEndpoint,
    result: SendResult,
    at: Date,
  ): Promise<void> {
    const { db, schedule, disableAfterMs, logger } = this.options;
    const status = result.statusCode;
    const ok = status !== undefined && status >= 200 && status < 300;
    const gone = status === 410;
    const attempts = delivery.attempts + 1;
    const delay = ok || gone ? undefined : nextAttemptDelay(schedule, attempts, result.retryAfterMs);
    const nextAttemptAt = delay === undefined ? null : new Date(Date.now() + delay);
    const error =
      result.error ?? (ok ? null : `HTTP ${status}${gone ? ' (Gone: the endpoint was disabled)' : ''}`);
    const failingSince = ok ? null : (endpoint.failingSince ?? at);
    let disabledReason: string | undefined;
    if (gone) disabledReason = `The endpoint answered 410 Gone at ${at.toISOString()}`;
    else if (failingSince && at.getTime() - failingSince.getTime() >= disableAfterMs)
      disabledReason = `Every attempt failed since ${failingSince.toISOString()}`;
    await db.$transaction([
      db.eventDeliveryAttempt.create({
        data: {
          deliveryId: delivery.id,
          endpointId: delivery.endpointId,
          attemptedAt: at,
          statusCode: status ?? null,
          latencyMs: result.latencyMs,
          error,
          nextAttemptAt,
        },
      }),
      db.eventDelivery.update({
        where: { id: delivery.id },
        data: {
          attempts,
          status: ok ? 'succeeded' : nextAttemptAt ? 'pending' : 'failed',
          ...(nextAttemptAt ? { nextAttemptAt } : {}),
        },
      }),
      // A healthy endpoint that stays healthy (the common case) needs no write.
      ...(failingSince?.getTime() === endpoint.failingSince?.getTime() && !disabledReason
        ? []
        : [
            db.eventEndpoint.updateMany({
              where: { id: endpoint.id },
              data: { failingSince, ...(disabledReason ? { enabled: false, disabledReason } : {}) },
            }),
          ]),
    ]);
    if (disabledReason)
      logger.warn({ endpointId: endpoint.id, reason: disabledReason }, 'event endpoint disabled');
  }
}
