import { decodeDeliveryMessage, encodeDeliveryMessage, type DeliveryMessage } from './delivery-message';

describe('delivery message', () => {
  const message: DeliveryMessage = {
    version: 1,
    webhookUid: 'wh_1',
    deliveryId: 'd-1',
    label: 'Accepted',
    identitySource: 'service_header',
    receivedAt: '2026-11-22T10:00:00.000Z',
    sizeBytes: 2,
    bodyBase64: Buffer.from('{}').toString('base64'),
  };

  it('round-trips', () => {
    expect(decodeDeliveryMessage(encodeDeliveryMessage(message))).toEqual(message);
  });

  it('refuses to encode an invalid message', () => {
    expect(() => encodeDeliveryMessage({ ...message, label: 'Nope' as DeliveryMessage['label'] })).toThrow();
  });

  it('decodes garbage to undefined instead of throwing', () => {
    expect(decodeDeliveryMessage(Buffer.from('not json'))).toBeUndefined();
    expect(decodeDeliveryMessage(Buffer.from('{"version":2}'))).toBeUndefined();
    expect(decodeDeliveryMessage(null)).toBeUndefined();
  });
});
