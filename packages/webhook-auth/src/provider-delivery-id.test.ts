import { providerDeliveryId } from './provider-delivery-id';

describe('providerDeliveryId', () => {
  it.each([
    ['standard-webhooks', { 'webhook-id': 'msg_1', 'webhook-signature': 'v1,x' }, 'msg_1'],
    ['standard-webhooks', { 'svix-id': 'msg_2', 'svix-signature': 'v1,x' }, 'msg_2'],
    [
      'github',
      { 'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' },
      '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    ],
    ['gitlab', { 'idempotency-key': 'idem-1', 'x-gitlab-event-uuid': 'uuid-1' }, 'idem-1'],
    ['gitlab', { 'x-gitlab-event-uuid': 'uuid-1' }, 'uuid-1'],
    ['linear', { 'linear-delivery': 'lin-1' }, 'lin-1'],
    ['shopify', { 'x-shopify-webhook-id': 'shop-1' }, 'shop-1'],
  ] as const)('%s reads its delivery header', (scheme, headers, expected) => {
    expect(providerDeliveryId(scheme, headers)).toBe(expected);
  });

  it('returns undefined for a missing, empty or duplicated header', () => {
    expect(providerDeliveryId('github', {})).toBeUndefined();
    expect(providerDeliveryId('github', { 'x-github-delivery': '' })).toBeUndefined();
    expect(providerDeliveryId('github', { 'x-github-delivery': ['a', 'b'] })).toBeUndefined();
    expect(providerDeliveryId('linear', { 'linear-delivery': 'a, b' })).toBeUndefined();
    expect(providerDeliveryId('standard-webhooks', { 'svix-id': 'msg_1' })).toBeUndefined();
  });

  it('takes Stripe event ids from the body, only when they are evt_ strings', () => {
    expect(providerDeliveryId('stripe', {}, { id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy', object: 'event' })).toBe(
      'evt_1NG8Du2eZvKYlo2CUI79vXWy',
    );
    for (const body of [
      undefined,
      null,
      'evt_1',
      [],
      { id: 'pi_123' },
      { id: 42 },
      { data: { id: 'evt_1' } },
    ]) {
      expect(providerDeliveryId('stripe', {}, body)).toBeUndefined();
    }
  });

  it('takes Slack event ids from the body when present', () => {
    expect(providerDeliveryId('slack', {}, { type: 'event_callback', event_id: 'Ev0PV52K21' })).toBe(
      'Ev0PV52K21',
    );
    expect(providerDeliveryId('slack', { 'x-slack-retry-num': '1' }, { command: '/deploy' })).toBeUndefined();
    expect(providerDeliveryId('slack', {}, { event_id: '' })).toBeUndefined();
  });
});
