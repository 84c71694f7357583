import { signWebhook, SIGNATURE_SCHEMES } from '@conveyor/webhook-auth';
import { authenticateDelivery } from './authenticate-delivery';

const rawBody = Buffer.from('{"hello":"world"}');
const now = new Date('2026-03-01T12:00:00Z');
const webhook = (authMode: string, secret = 'A'.repeat(43), signatureScheme = '') => ({
  authMode,
  secret,
  signatureScheme,
  awaitingSecret: false,
});

describe('authenticateDelivery', () => {
  it('token mode: Authorization Bearer, compared exactly', () => {
    const w = webhook('token');
    expect(
      authenticateDelivery({
        webhook: w,
        headers: { authorization: `Bearer ${w.secret}` },
        pathToken: undefined,
        rawBody,
        now,
      }),
    ).toEqual({ ok: true });
    expect(
      authenticateDelivery({
        webhook: w,
        headers: { authorization: `bearer   ${w.secret} ` },
        pathToken: undefined,
        rawBody,
        now,
      }).ok,
    ).toBe(true);
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /missing Authorization/],
      [{ authorization: `Basic ${w.secret}` }, /not "Bearer/],
      [{ authorization: `Bearer ${w.secret}x` }, /wrong bearer/],
      [{ authorization: 'Bearer' }, /not "Bearer/],
    ];
    for (const [headers, reason] of cases) {
      const result = authenticateDelivery({ webhook: w, headers, pathToken: undefined, rawBody, now });
      expect(!result.ok && result.reason).toMatch(reason);
    }
    const inPath = authenticateDelivery({
      webhook: w,
      headers: { authorization: `Bearer ${w.secret}` },
      pathToken: w.secret,
      rawBody,
      now,
    });
    expect(!inPath.ok && inPath.reason).toMatch(/not in the URL/);
  });

  it('url_token mode: the path segment, no header needed', () => {
    const w = webhook('url_token');
    expect(authenticateDelivery({ webhook: w, headers: {}, pathToken: w.secret, rawBody, now }).ok).toBe(
      true,
    );
    expect(
      authenticateDelivery({ webhook: w, headers: {}, pathToken: `${w.secret}x`, rawBody, now }).ok,
    ).toBe(false);
    expect(
      authenticateDelivery({
        webhook: w,
        headers: { authorization: `Bearer ${w.secret}` },
        pathToken: undefined,
        rawBody,
        now,
      }).ok,
    ).toBe(false);
  });

  it.each(SIGNATURE_SCHEMES)(
    'signature mode %s: signed with the real algorithm passes, unsigned or tampered fails',
    (scheme) => {
      const secret =
        scheme === 'standard-webhooks' ? 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' : 'provider-secret-123';
      const w = webhook('signature', secret, scheme);
      const headers = signWebhook(scheme, { secret, body: rawBody, now });
      expect(authenticateDelivery({ webhook: w, headers, pathToken: undefined, rawBody, now })).toEqual({
        ok: true,
      });
      expect(authenticateDelivery({ webhook: w, headers: {}, pathToken: undefined, rawBody, now }).ok).toBe(
        false,
      );
      if (scheme !== 'gitlab') {
        expect(
          authenticateDelivery({
            webhook: w,
            headers,
            pathToken: undefined,
            rawBody: Buffer.from('{"hello":"there"}'),
            now,
          }).ok,
        ).toBe(false);
      }
    },
  );

  it('rejects signatures older than five minutes', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const stale = new Date(now.getTime() - 5 * 60_000 - 1000);
    for (const scheme of ['standard-webhooks', 'stripe'] as const) {
      const headers = signWebhook(scheme, { secret, body: rawBody, now: stale });
      const result = authenticateDelivery({
        webhook: webhook('signature', secret, scheme),
        headers,
        pathToken: undefined,
        rawBody,
        now,
      });
      expect(!result.ok && result.reason).toMatch(/too old/);
    }
  });

  it('refuses everything while a signature webhook awaits its provider secret', () => {
    const result = authenticateDelivery({
      webhook: { authMode: 'signature', signatureScheme: 'stripe', secret: '', awaitingSecret: true },
      headers: {},
      pathToken: undefined,
      rawBody,
      now,
    });
    expect(!result.ok && result.reason).toMatch(/awaiting/);
  });
});
