import { Router, type NextFunction, type Request, type Response } from 'express';
import { AppError } from '@conveyor/errors';
import { DUPLICATE_REASONS, type DeliveryLabel, type DeliveryMessage } from '@conveyor/kafka';
import type { Logger } from '@conveyor/logger';
import { sendProblem } from '@conveyor/runtime';
import { isSignatureScheme, signedContentDigest } from '@conveyor/webhook-auth';
import { randomUUID } from 'node:crypto';
import { authenticateDelivery } from './authenticate-delivery';
import type { DedupeStore, DeliveryKeys } from './dedupe-store';
import { deliveryIdentity } from './delivery-identity';
import { PublishError, type DeliveryPublisher } from './delivery-publisher';
import type { RateLimits } from './rate-limits';
import { readBodyWithLimit } from './read-body';
import { acknowledgeSlack, parseSlackBody, urlVerificationChallenge } from './slack-requests';
import type { WebhookConfig, WebhookResolver } from './webhook-resolver';

export interface WebhookEndpointDeps {
  resolver: WebhookResolver;
  limits: RateLimits;
  dedupe: DedupeStore;
  publisher: DeliveryPublisher;
  logger: Logger;
  maxBodyBytes: number;
  publishTimeoutMs: number;
  unavailableRetryAfterSeconds: number;
  /** Called once per delivery-log entry (metrics). */
  onOutcome?: (label: DeliveryLabel) => void;
  now?: () => Date;
}

/** Where the token of the url_token form sits: `/webhooks/w/{webhook_uid}/{token}`. */
export const TOKEN_PLACEHOLDER = '{token}';
const TOKEN_PATH = /^(\/webhooks\/w\/[^/?]+)\/([^/?]+)(\/?(?:\?.*)?)$/;

declare module 'express-serve-static-core' {
  interface Locals {
    webhookPathToken?: string;
  }
}

/**
 * Keeps a url_token secret out of everything that records the URL (access log, error bodies' `instance`, metrics):
 * the segment is taken aside and the URL rewritten to show `{token}`, as the management API displays it.
 */
export function redactUrlToken(req: Request, res: Response, next: NextFunction): void {
  const match = TOKEN_PATH.exec(req.url);
  if (match) {
    let token = match[2]!;
    try {
      token = decodeURIComponent(token);
    } catch {
      // keep it as sent; it will simply not match
    }
    res.locals.webhookPathToken = token;
    req.url = `${match[1]}/${TOKEN_PLACEHOLDER}${match[3] ?? ''}`;
    req.originalUrl = req.url;
  }
  next();
}

/** Strict: a body that is not valid UTF-8 is not JSON (no replacement characters slipped in). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

const deliveryRateLimited = (retryAfter: number) =>
  new AppError('rate_limited', 'More than the allowed deliveries per minute for this sender', {
    details: { retry_after_seconds: retryAfter },
  });

const unavailable = (what: string, retryAfter: number) =>
  new AppError('resource_unavailable', what, { details: { retry_after_seconds: retryAfter } });

/**
 * POST {webhook_base_url}/webhooks/w/{webhook_uid}[/{token}]. Order of checks, each answering as soon as it fails:
 * method (405) → webhook known and enabled (404) → failed-authentication budget (429) → body ≤ 256 KB while
 * streaming (413) → credential (401) → valid JSON (400) → delivery budget (429) → identity and dedupe (202
 * duplicate) → Kafka acknowledgement (202, or 503 when Kafka is unavailable). Every outcome from 413 on is published
 * with its label for the delivery log (rejected and duplicate ones without the body); 404, 405 and 429 are not
 * deliveries of a webhook and are not logged. Deliveries rejected as too large or invalid JSON are deliveries too:
 * they take from the sender's delivery budget, so a sender over it gets 429 for them as well (failed
 * authentications have their own budget instead).
 */
export function webhookEndpoint(deps: WebhookEndpointDeps): Router {
  const router = Router();
  const now = deps.now ?? (() => new Date());
  const log = deps.logger;

  /** Rejections and duplicates are logged without waiting: the answer never depends on Kafka for them. */
  const publishRecord = (message: DeliveryMessage) => {
    deps.onOutcome?.(message.label);
    deps.publisher.publish(message, 30_000).catch((err: unknown) => {
      log.warn(
        {
          err: err instanceof Error ? err.message : err,
          deliveryId: message.deliveryId,
          label: message.label,
        },
        'delivery log record not published',
      );
    });
  };

  /** Takes a rejected delivery from the sender's budget; the problem to answer instead when it is spent or unknown. */
  const overDeliveryBudget = async (uid: string, sender: string): Promise<AppError | undefined> => {
    try {
      const budget = await deps.limits.consumeDelivery(uid, sender);
      return budget.allowed ? undefined : deliveryRateLimited(budget.retryAfterSeconds);
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : err }, 'rate limiting unavailable');
      return unavailable('Rate limiting is temporarily unavailable', deps.unavailableRetryAfterSeconds);
    }
  };

  const handle = async (req: Request, res: Response): Promise<void> => {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return sendProblem(req, res, new AppError('method_not_allowed', 'Only POST is accepted'));
    }
    const uid = String(req.params.uid);
    const pathToken = res.locals.webhookPathToken;
    const receivedAt = now();
    const sender = req.ip ?? req.socket.remoteAddress ?? 'unknown';

    let webhook: WebhookConfig;
    let authBudget: Awaited<ReturnType<RateLimits['checkFailedAuth']>>;
    try {
      // One round trip's worth of Redis reads: the configuration version and the failed-auth budget.
      const [version, budget] = await Promise.all([
        deps.resolver.readVersion(uid),
        deps.limits.checkFailedAuth(uid, sender),
      ]);
      authBudget = budget;
      webhook = await deps.resolver.resolve(uid, version);
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : err, webhookUid: uid }, 'webhook lookup failed');
      return sendProblem(
        req,
        res,
        unavailable('Webhook configuration is temporarily unavailable', deps.unavailableRetryAfterSeconds),
      );
    }
    if (!webhook.found || !webhook.enabled)
      return sendProblem(req, res, new AppError('resource_not_found', 'Webhook not found'));
    if (!authBudget.allowed) {
      return sendProblem(
        req,
        res,
        new AppError('rate_limited', 'Too many failed authentication attempts', {
          details: { retry_after_seconds: authBudget.retryAfterSeconds },
        }),
      );
    }

    const base = { version: 1 as const, webhookUid: uid, receivedAt: receivedAt.toISOString(), sender };
    const rejectedId = () => `rejected-${randomUUID()}`;

    const read = await readBodyWithLimit(req, deps.maxBodyBytes);
    if (!read.ok) {
      if (read.reason === 'aborted') return;
      // The rest of the body is never read: answer and close the connection.
      res.setHeader('Connection', 'close');
      res.on('finish', () => req.socket.destroySoon());
      const refused = await overDeliveryBudget(uid, sender);
      if (refused) return sendProblem(req, res, refused);
      const deliveryId = rejectedId();
      publishRecord({
        ...base,
        deliveryId,
        label: 'Rejected (too large)',
        identitySource: 'none',
        sizeBytes: read.receivedBytes,
        reason: `body over ${deps.maxBodyBytes} bytes`,
      });
      return sendProblem(
        req,
        res,
        new AppError('payload_too_large', `Body exceeds ${deps.maxBodyBytes} bytes`, {
          details: { delivery_id: deliveryId },
        }),
      );
    }
    const rawBody = read.body;

    const auth = authenticateDelivery({ webhook, headers: req.headers, pathToken, rawBody, now: receivedAt });
    if (!auth.ok) {
      const deliveryId = rejectedId();
      try {
        await deps.limits.recordFailedAuth(uid, sender);
      } catch (err) {
        log.warn({ err: err instanceof Error ? err.message : err }, 'failed-auth budget not recorded');
      }
      publishRecord({
        ...base,
        deliveryId,
        label: 'Rejected (auth)',
        identitySource: 'none',
        sizeBytes: rawBody.length,
        reason: auth.reason,
      });
      return sendProblem(
        req,
        res,
        new AppError('authentication_required', 'Webhook authentication failed', {
          details: { delivery_id: deliveryId },
        }),
      );
    }

    const scheme =
      webhook.authMode === 'signature' && isSignatureScheme(webhook.signatureScheme)
        ? webhook.signatureScheme
        : undefined;
    let parsedBody: unknown;
    // What is published: the body as received, except a Slack slash command's form, passed on as JSON.
    let published = rawBody;
    try {
      if (scheme === 'slack')
        ({ json: parsedBody, body: published } = parseSlackBody(req.headers['content-type'], rawBody));
      else parsedBody = JSON.parse(UTF8.decode(rawBody));
    } catch {
      const refused = await overDeliveryBudget(uid, sender);
      if (refused) return sendProblem(req, res, refused);
      const deliveryId = rejectedId();
      publishRecord({
        ...base,
        deliveryId,
        label: 'Rejected (invalid JSON)',
        identitySource: 'none',
        sizeBytes: rawBody.length,
        reason: 'body is not valid JSON',
      });
      return sendProblem(
        req,
        res,
        new AppError('invalid_request', 'Body is not valid JSON', { details: { delivery_id: deliveryId } }),
      );
    }

    const challenge = scheme === 'slack' ? urlVerificationChallenge(parsedBody) : undefined;
    if (challenge !== undefined) {
      res.status(200).json({ challenge });
      return;
    }
    /** 202 with the delivery's ID; Slack gets its own acknowledgement. */
    const acknowledge = (deliveryId: string) =>
      scheme === 'slack'
        ? acknowledgeSlack(res, parsedBody, deliveryId)
        : void res.status(202).json({ delivery_id: deliveryId });

    const identity = deliveryIdentity({
      headers: req.headers,
      configuredHeader: webhook.deliveryIdHeader || undefined,
      scheme,
      parsedBody,
      rawBody,
    });
    const keys: DeliveryKeys = {
      deliveryId: identity.id,
      signedDigest: scheme && signedContentDigest(scheme, req.headers, rawBody),
    };
    const record = {
      ...base,
      deliveryId: identity.id,
      identitySource: identity.source,
      sizeBytes: rawBody.length,
    };

    // The delivery budget and the dedupe reservation go to Redis together; a refused budget gives the ID back.
    const [budgetResult, reservationResult] = await Promise.allSettled([
      deps.limits.consumeDelivery(uid, sender),
      deps.dedupe.reserve(uid, keys),
    ]);
    if (budgetResult.status === 'rejected' || reservationResult.status === 'rejected') {
      if (reservationResult.status === 'fulfilled' && reservationResult.value.kind === 'reserved') {
        await deps.dedupe.release(uid, keys, reservationResult.value.token).catch(() => undefined);
      }
      const err: unknown =
        budgetResult.status === 'rejected'
          ? budgetResult.reason
          : (reservationResult as PromiseRejectedResult).reason;
      log.warn({ err: err instanceof Error ? err.message : err }, 'rate limiting or dedupe unavailable');
      return sendProblem(
        req,
        res,
        unavailable('Rate limiting or dedupe is temporarily unavailable', deps.unavailableRetryAfterSeconds),
      );
    }
    const budget = budgetResult.value;
    const reservation = reservationResult.value;
    if (!budget.allowed) {
      if (reservation.kind === 'reserved')
        await deps.dedupe.release(uid, keys, reservation.token).catch(() => undefined);
      return sendProblem(req, res, deliveryRateLimited(budget.retryAfterSeconds));
    }
    if (reservation.kind === 'duplicate') {
      publishRecord({ ...record, label: 'Duplicate', reason: DUPLICATE_REASONS[reservation.of] });
      log.info({ deliveryId: identity.id, webhookUid: uid, of: reservation.of }, 'Duplicate delivery');
      return acknowledge(identity.id);
    }
    if (reservation.kind === 'busy')
      return sendProblem(req, res, unavailable('A delivery with the same ID is still being accepted', 1));

    try {
      await deps.publisher.publish(
        {
          ...record,
          label: 'Accepted',
          bodyBase64: published.toString('base64'),
          ...(keys.signedDigest && { signedDigest: keys.signedDigest }),
        },
        deps.publishTimeoutMs,
      );
    } catch (err) {
      await deps.dedupe.release(uid, keys, reservation.token).catch(() => undefined);
      const kind = err instanceof PublishError ? err.kind : 'failed';
      log.warn(
        { err: err instanceof Error ? err.message : err, kind, deliveryId: identity.id, webhookUid: uid },
        'delivery not accepted: Kafka unavailable',
      );
      return sendProblem(
        req,
        res,
        unavailable('The delivery could not be stored; retry later', deps.unavailableRetryAfterSeconds),
      );
    }
    deps.onOutcome?.('Accepted');
    // Not awaited: until it lands, a request with the same ID waits on the reservation and then sees "accepted".
    // Should it fail, the reservation expires and the orchestrator's unique (webhook, delivery ID) and (webhook, signed digest) still log the
    // next copy as Duplicate and starts nothing.
    deps.dedupe.markAccepted(uid, keys).catch((err: unknown) => {
      log.warn(
        { err: err instanceof Error ? err.message : err, deliveryId: identity.id },
        'accepted delivery not marked for dedupe',
      );
    });
    acknowledge(identity.id);
  };

  router.use(redactUrlToken);
  router.all(['/webhooks/w/:uid', `/webhooks/w/:uid/:token`], (req, res, next) => {
    handle(req, res).catch(next);
  });
  return router;
}
