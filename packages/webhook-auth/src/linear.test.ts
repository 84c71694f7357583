import { createHmac } from 'node:crypto';
import { signLinear } from './sign';
import type { WebhookHeaders } from './types';
import { verifySignature } from './verify-signature';

// No published vector: the expected MAC is computed with node's crypto, independently of our code.
const SECRET = 'lin_wh_0123456789abcdef';
const NOW = new Date('2024-05-01T12:00:00.000Z');
const body = (fields: Record<string, unknown>) =>
  Buffer.from(JSON.stringify({ action: 'create', type: 'Issue', ...fields }));
const sign = (rawBody: Buffer): WebhookHeaders => ({
  'linear-signature': createHmac('sha256', SECRET).update(rawBody).digest('hex'),
});
const verify = (rawBody: Buffer, headers: WebhookHeaders = sign(rawBody), secret = SECRET) =>
  verifySignature({ scheme: 'linear', secret, headers, rawBody, now: NOW });

describe('linear', () => {
  it('signs with the real algorithm and verifies it', () => {
    const rawBody = body({ webhookTimestamp: NOW.getTime() });
    expect(signLinear({ secret: SECRET, body: rawBody })).toEqual(sign(rawBody));
    expect(verify(rawBody, { 'Linear-Signature': sign(rawBody)['linear-signature'] })).toEqual({ ok: true });
  });

  it('rejects a webhookTimestamp more than 60 s from now, in milliseconds', () => {
    const at = (offsetMs: number) => verify(body({ webhookTimestamp: NOW.getTime() + offsetMs }));
    expect(at(-60_000)).toEqual({ ok: true });
    expect(at(60_000)).toEqual({ ok: true });
    expect(at(-60_001)).toEqual({ ok: false, reason: 'timestamp too old' });
    expect(at(60_001)).toEqual({ ok: false, reason: 'timestamp too far in the future' });
    // Seconds instead of milliseconds are decades off.
    expect(at(Math.floor(NOW.getTime() / 1000) - NOW.getTime()).ok).toBe(false);
  });

  it('accepts a body without webhookTimestamp, or one that is not a JSON object', () => {
    expect(verify(body({}))).toEqual({ ok: true });
    expect(verify(Buffer.from('not json'))).toEqual({ ok: true });
    expect(verify(Buffer.from('[1,2]'))).toEqual({ ok: true });
  });

  it('rejects a webhookTimestamp that is not a number', () => {
    expect(verify(body({ webhookTimestamp: String(NOW.getTime()) }))).toEqual({
      ok: false,
      reason: 'malformed webhookTimestamp',
    });
    expect(verify(body({ webhookTimestamp: null })).ok).toBe(false);
  });

  it('checks the signature before the timestamp', () => {
    const stale = body({ webhookTimestamp: 0 });
    expect(verify(stale, sign(stale), 'wrong secret')).toEqual({ ok: false, reason: 'signature mismatch' });
  });

  it('rejects a tampered body, a missing, truncated or duplicated header', () => {
    const rawBody = body({});
    expect(verify(body({ action: 'remove' }), sign(rawBody)).ok).toBe(false);
    expect(verify(rawBody, {})).toEqual({ ok: false, reason: 'missing header linear-signature' });
    const signature = sign(rawBody)['linear-signature'] as string;
    expect(verify(rawBody, { 'linear-signature': signature.slice(0, 63) }).ok).toBe(false);
    expect(verify(rawBody, { 'linear-signature': [signature, signature] }).ok).toBe(false);
  });
});
