import { type EventEndpoint, type Prisma, type PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import { BackgroundLoop } from '@conveyor/runtime';
import type { SecretCipher } from '../secrets/secret-cipher';
import { buildEventBodies } from './event-body';
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
const CLAIM_BATCH = 500;

interface Claimed {
  id: bigint;
  eventId: string;
  endpointId: string;
  attempts: number;
}

/** One finished attempt waiting to be recorded with the others of its flush. */
interface Outcome {
  delivery: Claimed;
  endpoint: EventEndpoint;
  result: SendResult;
  at: Date;
}

/**
 * Delivers outbound events (docs/events.md). Deliveries are rows written with the change that caused them; a pass
 * claims the due ones by pushing their `nextAttemptAt` past the attempt's timeout (a lease: a crashed orchestrator's
 * claims come due again, so every event is delivered at least once across restarts, and replicas share the work
 * through SKIP LOCKED). Only the oldest pending delivery of a run per endpoint is due, so one endpoint sees one run's
 * events in the order they happened. Attempts run without the pass waiting for them, at most `concurrency` per
 * endpoint: a slow or dead endpoint fills its own slots and nobody else's.
 *
 * Round trips are per pass, not per attempt: one claim, one read of the claimed deliveries' endpoints and one of their
 * events, the bodies of events never sent before built and stored together, and finished attempts are recorded together in one transaction
 * (attempt rows, delivery states, endpoint health). A delivery stays `pending` under its lease until its result is
 * recorded, so the run's next event for that endpoint waits for it, and a crash before recording only repeats it.
 */
export class EventDispatcher {
  readonly loop: BackgroundLoop;
  private readonly inFlight = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();
  private outcomes: Outcome[] = [];
  private flushing: Promise<void> | undefined;

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

  /** Stops claiming, then waits for the attempts in flight (each ends within the timeout) and records them. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.settled();
  }

  /** Resolves once the attempts started so far have ended and been recorded. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.attempts]);
    await this.flush();
  }

  /** Claims what is due and starts its attempts; resolves once they are started, not finished. */
  async dispatch(): Promise<number> {
    const { db, concurrency, timeoutMs } = this.options;
    const busy = [...this.inFlight].filter(([, n]) => n >= concurrency).map(([id]) => id);
    const used = JSON.stringify(Object.fromEntries(this.inFlight));
    const leaseMs = timeoutMs + 30_000;
    const claimed = await db.$queryRaw<Claimed[]>`
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
    if (claimed.length === 0) return 0;
    for (const delivery of claimed)
      this.inFlight.set(delivery.endpointId, (this.inFlight.get(delivery.endpointId) ?? 0) + 1);
    let prepared: { endpoints: Map<string, EventEndpoint>; bodies: Map<string, string> };
    try {
      prepared = await this.prepare(claimed);
    } catch (err) {
      // The leases expire and the deliveries come due again.
      for (const delivery of claimed) this.release(delivery.endpointId);
      throw err;
    }
    const now = new Date();
    const secrets = new Map<string, string[]>();
    for (const delivery of claimed) {
      const endpoint = prepared.endpoints.get(delivery.endpointId);
      const body = prepared.bodies.get(delivery.eventId);
      if (!endpoint?.enabled || body === undefined) {
        this.release(delivery.endpointId);
        continue;
      }
      if (!secrets.has(endpoint.id))
        secrets.set(endpoint.id, signingSecrets(this.options.cipher, endpoint, now));
      const attempt = this.attempt(delivery, endpoint, body, secrets.get(endpoint.id)!).finally(() => {
        this.release(delivery.endpointId);
        this.attempts.delete(attempt);
        void this.flush();
      });
      this.attempts.add(attempt);
    }
    return claimed.length;
  }

  private release(endpointId: string): void {
    const left = (this.inFlight.get(endpointId) ?? 1) - 1;
    if (left > 0) this.inFlight.set(endpointId, left);
    else this.inFlight.delete(endpointId);
  }

  /** The claimed deliveries' endpoints and event bodies, in two reads plus one build per event never sent before. */
  private async prepare(
    claimed: Claimed[],
  ): Promise<{ endpoints: Map<string, EventEndpoint>; bodies: Map<string, string> }> {
    const { db, publicApiBaseUrl } = this.options;
    const [endpoints, events] = await Promise.all([
      db.eventEndpoint.findMany({ where: { id: { in: [...new Set(claimed.map((d) => d.endpointId))] } } }),
      db.outboundEvent.findMany({ where: { id: { in: [...new Set(claimed.map((d) => d.eventId))] } } }),
    ]);
    const bodies = new Map(events.flatMap((e) => (e.body === null ? [] : [[e.id, e.body] as const])));
    const unsent = events.filter((e) => e.body === null);
    if (unsent.length > 0) {
      const built = await buildEventBodies(db, unsent, publicApiBaseUrl);
      // The first body built is the one every attempt sends, even if two orchestrators built one at once.
      const ids = [...built.keys()];
      const stored = await db.$queryRaw<Array<{ id: string }>>`
        UPDATE "OutboundEvent" o SET body = v.body
          FROM unnest(${ids}::text[], ${[...built.values()]}::text[]) AS v(id, body)
         WHERE o.id = v.id AND o.body IS NULL
        RETURNING o.id`;
      const mine = new Set(stored.map((r) => r.id));
      for (const [id, body] of built) if (mine.has(id)) bodies.set(id, body);
      const theirs = ids.filter((id) => !mine.has(id));
      if (theirs.length > 0)
        for (const e of await db.outboundEvent.findMany({ where: { id: { in: theirs } } }))
          if (e.body !== null) bodies.set(e.id, e.body);
    }
    return { endpoints: new Map(endpoints.map((e) => [e.id, e])), bodies };
  }

  private async attempt(
    delivery: Claimed,
    endpoint: EventEndpoint,
    body: string,
    secrets: string[],
  ): Promise<void> {
    const { urls } = this.options;
    const at = new Date();
    let result: SendResult;
    try {
      const url = parseEndpointUrl(endpoint.url, urls);
      // Resolved again at every attempt: what the name pointed at when the endpoint was saved proves nothing now.
      const [address] = await resolveEndpoint(url, urls);
      const headers = signEvent(delivery.eventId, body, secrets, at);
      result = await sendEvent(url, address!, headers, body, this.options.timeoutMs);
    } catch (err) {
      result = { error: err instanceof Error ? err.message : String(err), latencyMs: 0 };
    }
    this.outcomes.push({ delivery, endpoint, result, at });
  }

  /** Records the finished attempts not yet recorded; one flush at a time, the next takes what arrived meanwhile. */
  private flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (this.outcomes.length === 0) return Promise.resolve();
    const batch = this.outcomes;
    this.outcomes = [];
    this.flushing = this.record(batch)
      .catch((err: unknown) =>
        this.options.logger.error(
          { err, attempts: batch.length },
          'event delivery attempts could not be recorded; their leases will expire and they are retried',
        ),
      )
      .finally(() => {
        this.flushing = undefined;
        // The runs' next events for these endpoints are due now.
        void this.loop.trigger();
      });
    return this.flushing;
  }

  /** The attempts' rows, the deliveries' next states, and the endpoints' health, in one transaction. */
  private async record(batch: Outcome[]): Promise<void> {
    const { db, schedule, disableAfterMs, logger } = this.options;
    const attempts: Prisma.EventDeliveryAttemptCreateManyInput[] = [];
    const ids: bigint[] = [];
    const counts: number[] = [];
    const statuses: string[] = [];
    const nexts: Array<Date | null> = [];
    const health = new Map<
      string,
      { endpoint: EventEndpoint; failingSince: Date | null; disabledReason?: string }
    >();
    for (const { delivery, endpoint, result, at } of batch) {
      const status = result.statusCode;
      const ok = status !== undefined && status >= 200 && status < 300;
      const gone = status === 410;
      const count = delivery.attempts + 1;
      const delay = ok || gone ? undefined : nextAttemptDelay(schedule, count, result.retryAfterMs);
      const nextAttemptAt = delay === undefined ? null : new Date(Date.now() + delay);
      attempts.push({
        deliveryId: delivery.id,
        endpointId: delivery.endpointId,
        attemptedAt: at,
        statusCode: status ?? null,
        latencyMs: result.latencyMs,
        error:
          result.error ?? (ok ? null : `HTTP ${status}${gone ? ' (Gone: the endpoint was disabled)' : ''}`),
        nextAttemptAt,
      });
      ids.push(delivery.id);
      counts.push(count);
      statuses.push(ok ? 'succeeded' : nextAttemptAt ? 'pending' : 'failed');
      nexts.push(nextAttemptAt);
      // Health in the order the attempts ended: a success clears the failing streak, a failure starts or extends it.
      const state = health.get(endpoint.id) ?? { endpoint, failingSince: endpoint.failingSince };
      state.failingSince = ok ? null : (state.failingSince ?? at);
      if (gone) state.disabledReason = `The endpoint answered 410 Gone at ${at.toISOString()}`;
      else if (state.failingSince && at.getTime() - state.failingSince.getTime() >= disableAfterMs)
        state.disabledReason ??= `Every attempt failed since ${state.failingSince.toISOString()}`;
      health.set(endpoint.id, state);
    }
    // A healthy endpoint that stays healthy (the common case) needs no write.
    const changed = [...health.values()].filter(
      (h) => h.failingSince?.getTime() !== h.endpoint.failingSince?.getTime() || h.disabledReason,
    );
    await db.$transaction([
      db.eventDeliveryAttempt.createMany({ data: attempts }),
      db.$executeRaw`
        UPDATE "EventDelivery" d
           SET attempts = v.attempts, status = v.status, "nextAttemptAt" = COALESCE(v.next, d."nextAttemptAt")
          FROM unnest(${ids}::bigint[], ${counts}::int[], ${statuses}::text[], ${nexts.map((d) => d?.toISOString() ?? null)}::timestamptz[])
               AS v(id, attempts, status, next)
         WHERE d.id = v.id`,
      ...changed.map((h) =>
        db.eventEndpoint.updateMany({
          where: { id: h.endpoint.id },
          data: {
            failingSince: h.failingSince,
            ...(h.disabledReason ? { enabled: false, disabledReason: h.disabledReason } : {}),
          },
        }),
      ),
    ]);
    for (const h of changed)
      if (h.disabledReason)
        logger.warn({ endpointId: h.endpoint.id, reason: h.disabledReason }, 'event endpoint disabled');
  }
}
