import type { EventEndpoint, OutboundEvent, PrismaClient } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { Counter } from '@conveyor/metrics';
import { BackgroundLoop } from '@conveyor/runtime';
import { standardWebhooksHeaders, standardWebhooksSigningKey } from '@conveyor/webhook-auth';
import type { SecretCipher } from '../secrets/secret-cipher';
import { classifyRouteError, statusError, type AttemptError } from './attempt-error';
import { buildEventBodies } from './event-body';
import { EventSender, type SendResult } from './event-sender';
import { signingSecrets } from './endpoint-secret';
import { parseEndpointUrl, resolveEndpoint, type EndpointUrlRules } from './endpoint-url';
import { nextAttemptDelay } from './retry-schedule';

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
  /** conveyor_event_delivery_attempts_total, counted as attempts are recorded. */
  attempts?: Counter<'outcome'>;
}

/** A claimed delivery with its event: the stored body, or what building it needs when it was never sent. */
interface Claimed {
  id: bigint;
  eventId: string;
  endpointId: string;
  attempts: number;
  body: string | null;
  teamId: string;
  runId: string;
  type: string;
  data: OutboundEvent['data'];
  occurredAt: Date;
}

/** What a pass knows of an endpoint it attempts: where to connect and what to sign with (or why not), worked out once. */
interface Target {
  endpoint: EventEndpoint;
  route: { url: URL; address: string; keys: Buffer[] } | { refused: AttemptError };
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
 * endpoint, each on its own kept-alive connection to that endpoint: a slow or dead endpoint fills its own slots and
 * sockets and nobody else's.
 *
 * Round trips are per pass, not per attempt: one claim that returns each delivery's event, one read of the endpoints
 * (each resolved, checked and its keys decrypted once per pass), the bodies of events never sent before built and
 * stored together, and finished attempts recorded together in one statement (attempt rows and delivery states;
 * endpoint health in the same transaction when it changes). A delivery stays `pending` under its lease until its
 * result is recorded, so the run's next event for that endpoint waits for it, and a crash before recording only
 * repeats it.
 */
export class EventDispatcher {
  readonly loop: BackgroundLoop;
  private readonly inFlight = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();
  private outcomes: Outcome[] = [];
  private flushing: Promise<void> | undefined;
  private readonly sender: EventSender;

  constructor(private readonly options: EventDispatcherOptions) {
    // A connection per slot: an endpoint never has more requests in flight than sockets, so none waits for a socket.
    this.sender = new EventSender(options.concurrency);
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
    await this.sender.close();
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
    // Per endpoint, its oldest due deliveries (an index range each: the backlog is not read), of which only a run's
    // oldest pending one per endpoint may go (its order); the window reaches `concurrency` rows past the free slots
    // for the runs' later events waiting behind the ones in flight (a retry pushes them back with it: record()).
    // Checking order after the window, with min() on (endpointId, runId, id), keeps the plan the same with or without
    // table statistics: as an anti-join inside the window, a freshly filled table (never analyzed) got a plan
    // reading every pending delivery of the endpoint per candidate (seconds a pass at 100k rows; the migration 20261126013000 says why the index has status).
    const claimed = await db.$queryRaw<Claimed[]>`
      WITH free AS (
        SELECT e.id, ${concurrency} - COALESCE((${used}::jsonb ->> e.id)::int, 0) AS slots
          FROM "EventEndpoint" e
         WHERE e.enabled AND NOT (e.id = ANY(${busy}::text[]))
      ), due AS (
        SELECT c.id, f.slots, row_number() OVER (PARTITION BY f.id ORDER BY c."nextAttemptAt", c.id) AS n
          FROM free f
         CROSS JOIN LATERAL (
           SELECT d.id, d."endpointId", d."runId", d."nextAttemptAt"
             FROM "EventDelivery" d
            WHERE d."endpointId" = f.id AND d.status = 'pending' AND d."nextAttemptAt" <= now()
            ORDER BY d."nextAttemptAt", d.id
            LIMIT f.slots + ${concurrency}
              FOR UPDATE OF d SKIP LOCKED) c
         WHERE c.id = (SELECT min(p.id) FROM "EventDelivery" p
                        WHERE p."endpointId" = c."endpointId" AND p."runId" = c."runId" AND p.status = 'pending')
      )
      UPDATE "EventDelivery" d
         SET "nextAttemptAt" = now() + make_interval(secs => ${leaseMs / 1000})
        FROM due, "OutboundEvent" o
       WHERE d.id = due.id AND due.n <= due.slots AND o.id = d."eventId"
      RETURNING d.id, d."eventId", d."endpointId", d.attempts, o.body, o."teamId", o."runId", o.type, o.data,
                o."occurredAt"`;
    if (claimed.length === 0) return 0;
    for (const delivery of claimed)
      this.inFlight.set(delivery.endpointId, (this.inFlight.get(delivery.endpointId) ?? 0) + 1);
    let targets: Map<string, Target>;
    let bodies: Map<string, string>;
    try {
      [targets, bodies] = await Promise.all([this.targets(claimed), this.bodies(claimed)]);
    } catch (err) {
      // The leases expire and the deliveries come due again.
      for (const delivery of claimed) this.release(delivery.endpointId);
      throw err;
    }
    this.sender.sweep();
    for (const delivery of claimed) {
      const target = targets.get(delivery.endpointId);
      const body = bodies.get(delivery.eventId);
      if (!target?.endpoint.enabled || body === undefined) {
        this.release(delivery.endpointId);
        continue;
      }
      const attempt = this.attempt(delivery, target, body).finally(() => {
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

  /**
   * The claimed deliveries' endpoints in one read, each with its address and signing keys worked out once per pass:
   * the URL is checked against the egress rules and resolved again at every pass that attempts it (what the name
   * pointed at when the endpoint was saved proves nothing now), and the attempts connect to the address checked here.
   */
  private async targets(claimed: Claimed[]): Promise<Map<string, Target>> {
    const { db, cipher, urls } = this.options;
    const endpoints = await db.eventEndpoint.findMany({
      where: { id: { in: [...new Set(claimed.map((d) => d.endpointId))] } },
    });
    const now = new Date();
    const route = async (endpoint: EventEndpoint): Promise<Target['route']> => {
      try {
        const url = parseEndpointUrl(endpoint.url, urls);
        const [address] = await resolveEndpoint(url, urls);
        return {
          url,
          address: address!,
          keys: signingSecrets(cipher, endpoint, now).map(standardWebhooksSigningKey),
        };
      } catch (err) {
        // Recorded as each attempt's error, like a refused connection: the endpoint's health sees it.
        return { refused: classifyRouteError(err) };
      }
    };
    return new Map(
      await Promise.all(
        endpoints.map(async (endpoint) => [endpoint.id, { endpoint, route: await route(endpoint) }] as const),
      ),
    );
  }

  /** The claimed deliveries' bodies: stored ones as they are, the rest built together and stored in one statement. */
  private async bodies(claimed: Claimed[]): Promise<Map<string, string>> {
    const { db, publicApiBaseUrl } = this.options;
    const bodies = new Map<string, string>();
    const unsent = new Map<string, OutboundEvent>();
    for (const d of claimed)
      if (d.body !== null) bodies.set(d.eventId, d.body);
      else
        unsent.set(d.eventId, {
          id: d.eventId,
          teamId: d.teamId,
          runId: d.runId,
          type: d.type,
          data: d.data,
          body: null,
          occurredAt: d.occurredAt,
        });
    if (unsent.size === 0) return bodies;
    const built = await buildEventBodies(db, [...unsent.values()], publicApiBaseUrl);
    // The first body built is the one every attempt sends, even if two orchestrators built one at once.
    const ids = [...built.keys()];
    const stored = await db.$queryRaw<Array<{ id: string; body: string }>>`
      WITH v AS (SELECT * FROM unnest(${ids}::text[], ${[...built.values()]}::text[]) AS v(id, body)),
           mine AS (UPDATE "OutboundEvent" o SET body = v.body FROM v WHERE o.id = v.id AND o.body IS NULL
                    RETURNING o.id, o.body)
      SELECT id, body FROM mine
      UNION ALL
      SELECT o.id, o.body FROM "OutboundEvent" o JOIN v ON v.id = o.id
       WHERE o.body IS NOT NULL AND o.id NOT IN (SELECT id FROM mine)`;
    for (const { id, body } of stored) bodies.set(id, body);
    return bodies;
  }

  private async attempt(delivery: Claimed, { endpoint, route }: Target, body: string): Promise<void> {
    const at = new Date();
    let result: SendResult;
    if ('refused' in route) result = { error: route.refused, latencyMs: 0 };
    else {
      const headers = standardWebhooksHeaders({
        id: delivery.eventId,
        timestamp: at,
        body,
        keys: route.keys,
      });
      result = await this.sender.send(route.url, route.address, headers, body, this.options.timeoutMs);
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

  /**
   * The attempts' rows and the deliveries' next states in one statement (a transaction of its own), with the
   * endpoints' health in the same transaction when it changed. An attempt row is written only for a delivery that
   * still exists (its endpoint may have been deleted meanwhile), so one deletion cannot fail the whole batch.
   */
  private async record(batch: Outcome[]): Promise<void> {
    const { db, schedule, disableAfterMs, logger } = this.options;
    const n = batch.length;
    const ids = new Array<bigint>(n);
    const endpointIds = new Array<string>(n);
    const ats = new Array<string>(n);
    const codes = new Array<number | null>(n);
    const latencies = new Array<number>(n);
    const errors = new Array<string | null>(n);
    const counts = new Array<number>(n);
    const statuses = new Array<string>(n);
    const nexts = new Array<string | null>(n);
    const health = new Map<
      string,
      { endpoint: EventEndpoint; failingSince: Date | null; disabledReason?: string }
    >();
    batch.forEach(({ delivery, endpoint, result, at }, i) => {
      const status = result.statusCode;
      const ok = status !== undefined && status >= 200 && status < 300;
      this.options.attempts?.inc({ outcome: ok ? 'succeeded' : 'failed' });
      const gone = status === 410;
      const count = delivery.attempts + 1;
      const delay = ok || gone ? undefined : nextAttemptDelay(schedule, count, result.retryAfterMs);
      const nextAttemptAt = delay === undefined ? null : new Date(Date.now() + delay);
      ids[i] = delivery.id;
      endpointIds[i] = delivery.endpointId;
      ats[i] = at.toISOString();
      codes[i] = status ?? null;
      latencies[i] = result.latencyMs;
      errors[i] = result.error ?? (ok ? null : statusError(status!));
      counts[i] = count;
      statuses[i] = ok ? 'succeeded' : nextAttemptAt ? 'pending' : 'failed';
      nexts[i] = nextAttemptAt?.toISOString() ?? null;
      // Health in the order the attempts ended: a success clears the failing streak, a failure starts or extends it.
      const state = health.get(endpoint.id) ?? { endpoint, failingSince: endpoint.failingSince };
      state.failingSince = ok ? null : (state.failingSince ?? at);
      if (gone) state.disabledReason = `The endpoint answered 410 Gone at ${at.toISOString()}`;
      else if (state.failingSince && at.getTime() - state.failingSince.getTime() >= disableAfterMs)
        state.disabledReason ??= `Every attempt failed since ${state.failingSince.toISOString()}`;
      health.set(endpoint.id, state);
    });
    const results = db.$executeRaw`
      WITH v AS (
        SELECT * FROM unnest(${ids}::bigint[], ${endpointIds}::text[], ${ats}::timestamptz[], ${codes}::int[],
                             ${latencies}::int[], ${errors}::text[], ${counts}::int[], ${statuses}::text[],
                             ${nexts}::timestamptz[])
          AS v(id, "endpointId", at, code, latency, error, attempts, status, next)
      ), updated AS (
        UPDATE "EventDelivery" d
           SET attempts = v.attempts, status = v.status, "nextAttemptAt" = COALESCE(v.next, d."nextAttemptAt")
          FROM v
         WHERE d.id = v.id
        RETURNING d.id, d."endpointId", d."runId", v.status, v.next
      ), behind AS (
        -- A run's later events for the endpoint wait behind its retry (order), so they are not due before it either.
        UPDATE "EventDelivery" l
           SET "nextAttemptAt" = u.next
          FROM updated u
         WHERE u.status = 'pending' AND l."endpointId" = u."endpointId" AND l."runId" = u."runId"
           AND l.status = 'pending' AND l.id > u.id AND l."nextAttemptAt" < u.next
      )
      INSERT INTO "EventDeliveryAttempt"
             ("deliveryId", "endpointId", "attemptedAt", "statusCode", "latencyMs", error, "nextAttemptAt")
      SELECT v.id, v."endpointId", v.at, v.code, v.latency, v.error, v.next FROM v JOIN updated USING (id)`;
    // A healthy endpoint that stays healthy (the common case) needs no write.
    const changed = [...health.values()].filter(
      (h) => h.failingSince?.getTime() !== h.endpoint.failingSince?.getTime() || h.disabledReason,
    );
    if (changed.length === 0) await results;
    else
      await db.$transaction([
        results,
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
