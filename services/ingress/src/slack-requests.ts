import type { Response } from 'express';

/**
 * What Slack needs of the ingress besides the signature check (docs/webhooks.md "Slack"): slash commands arrive
 * form-encoded, the Events API's URL verification expects its challenge back, and Slack wants a 200 within 3 s.
 */

/** Strict: a body that is not valid UTF-8 is neither JSON nor a form. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A Slack request's body as an object: JSON (the Events API), or a slash command's form, each field a string. The
 * form is passed on as that JSON object, so the orchestrator and the delivery log read one shape. Throws when it is
 * neither.
 */
export function parseSlackBody(
  contentType: string | undefined,
  rawBody: Buffer,
): { json: unknown; body: Buffer } {
  const text = UTF8.decode(rawBody);
  if (!/^application\/x-www-form-urlencoded\b/i.test(contentType ?? ''))
    return { json: JSON.parse(text), body: rawBody };
  const json = Object.fromEntries(new URLSearchParams(text));
  return { json, body: Buffer.from(JSON.stringify(json)) };
}

/** The Events API's handshake: answered with its challenge, and only once the request's signature was checked. */
export function urlVerificationChallenge(body: unknown): string | undefined {
  const b = body as { type?: unknown; challenge?: unknown } | null;
  return b?.type === 'url_verification' && typeof b.challenge === 'string' ? b.challenge : undefined;
}

/**
 * Slack's acknowledgement: a 200 (Slack retries anything else), for a slash command a note only its sender sees (the
 * run's messages follow in a thread).
 */
export function acknowledgeSlack(res: Response, body: unknown, deliveryId: string): void {
  const command = (body as { command?: unknown } | null)?.command;
  if (typeof command === 'string')
    res.status(200).json({ response_type: 'ephemeral', text: 'Received: the answer follows in a thread.' });
  else res.status(200).json({ delivery_id: deliveryId });
}
