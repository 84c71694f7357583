import { signWebhook } from '@conveyor/webhook-auth';
import { bodyHash, deliveryIdentity } from './delivery-identity';

const rawBody = Buffer.from('{"id":"evt_123","event_id":"Ev1"}');
const parsedBody = JSON.parse(rawBody.toString()) as unknown;

describe('deliveryIdentity', () => {
  it('prefers the configured header, then the provider, then X-Service-Delivery-Id, then the body hash', () => {
    const headers = { 'x-my-id': 'mine-1', 'x-github-delivery': 'gh-1', 'x-service-delivery-id': 'svc-1' };
    expect(
      deliveryIdentity({ headers, configuredHeader: 'X-My-Id', scheme: 'github', parsedBody, rawBody }),
    ).toEqual({ id: 'mine-1', source: 'configured_header' });
    expect(deliveryIdentity({ headers, scheme: 'github', parsedBody, rawBody })).toEqual({
      id: 'gh-1',
      source: 'provider_header',
    });
    expect(deliveryIdentity({ headers, parsedBody, rawBody })).toEqual({
      id: 'svc-1',
      source: 'service_header',
    });
    expect(deliveryIdentity({ headers: {}, parsedBody, rawBody })).toEqual({
      id: bodyHash(rawBody),
      source: 'body_hash',
    });
  });

  it('falls through when the configured header is absent', () => {
    expect(
      deliveryIdentity({
        headers: { 'x-service-delivery-id': 'svc' },
        configuredHeader: 'x-my-id',
        parsedBody,
        rawBody,
      }).source,
    ).toBe('service_header');
  });

  it('takes the provider delivery identity of each scheme', () => {
    const now = new Date();
    const sw = signWebhook('standard-webhooks', {
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      body: rawBody,
      now,
      id: 'msg_1',
    });
    expect(deliveryIdentity({ headers: sw, scheme: 'standard-webhooks', parsedBody, rawBody })).toEqual({
      id: 'msg_1',
      source: 'provider_header',
    });
    expect(
      deliveryIdentity({
        headers: { 'svix-id': 'msg_2', 'svix-signature': 'v1,x' },
        scheme: 'standard-webhooks',
        parsedBody,
        rawBody,
      }).id,
    ).toBe('msg_2');
    expect(deliveryIdentity({ headers: {}, scheme: 'stripe', parsedBody, rawBody }).id).toBe('evt_123');
    expect(deliveryIdentity({ headers: {}, scheme: 'slack', parsedBody, rawBody }).id).toBe('Ev1');
    expect(
      deliveryIdentity({ headers: { 'idempotency-key': 'gl-1' }, scheme: 'gitlab', parsedBody, rawBody }).id,
    ).toBe('gl-1');
    expect(
      deliveryIdentity({ headers: { 'linear-delivery': 'ln-1' }, scheme: 'linear', parsedBody, rawBody }).id,
    ).toBe('ln-1');
    expect(
      deliveryIdentity({
        headers: { 'x-shopify-webhook-id': 'sh-1' },
        scheme: 'shopify',
        parsedBody,
        rawBody,
      }).id,
    ).toBe('sh-1');
  });

  it('ignores unusable IDs: too long, with spaces, or sent twice', () => {
    for (const value of ['x'.repeat(201), 'has space', 'a, b']) {
      expect(
        deliveryIdentity({ headers: { 'x-service-delivery-id': value }, parsedBody, rawBody }).source,
      ).toBe('body_hash');
    }
    expect(
      deliveryIdentity({ headers: { 'x-service-delivery-id': ['a', 'b'] }, parsedBody, rawBody }).source,
    ).toBe('body_hash');
  });

  it('hashes identical bodies identically', () => {
    expect(bodyHash(Buffer.from('[1]'))).toBe(bodyHash(Buffer.from('[1]')));
    expect(bodyHash(Buffer.from('[1]'))).not.toBe(bodyHash(Buffer.from('[2]')));
    expect(bodyHash(Buffer.from(''))).toMatch(/^[0-9a-f]{64}$/);
  });
});
