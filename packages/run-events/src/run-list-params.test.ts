import { isEnvironmentId, isMetadataKey, isMetadataValue, normalizeRfc3339 } from './run-list-params';

describe('run list parameters', () => {
  it('normalizes RFC 3339 timestamps, keeping fractional seconds', () => {
    expect(normalizeRfc3339('2019-12-27T18:11:19.117Z')).toBe('2019-12-27T18:11:19.117Z');
    expect(normalizeRfc3339('2019-12-27t18:11:19z')).toBe('2019-12-27T18:11:19Z');
    expect(normalizeRfc3339('2019-12-27 18:11:19.123456+02:00')).toBe('2019-12-27T18:11:19.123456+02:00');
    expect(normalizeRfc3339('2024-02-29T00:00:00Z')).toBe('2024-02-29T00:00:00Z');
  });

  it('rejects what is not an RFC 3339 date-time', () => {
    for (const bad of [
      '',
      'yesterday',
      '2019-12-27',
      '2019-12-27T18:11Z',
      '2019-12-27T18:11:19',
      '1577470279',
      '2019-02-30T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2019-13-01T00:00:00Z',
      '2019-12-27T24:00:00Z',
      '2019-12-27T18:11:19+25:00',
      ' 2019-12-27T18:11:19Z',
    ]) {
      expect(normalizeRfc3339(bad)).toBeUndefined();
    }
  });

  it('knows environment IDs and metadata keys and values', () => {
    expect(isEnvironmentId('AbCdEfGhIjKlMnOpQrStUv')).toBe(true);
    expect(isEnvironmentId('empty-environment')).toBe(false);
    expect(isEnvironmentId('AbCdEfGhIjKlMnOpQrStU')).toBe(false);
    expect(isMetadataKey('ticket_id')).toBe(true);
    expect(isMetadataKey('a.b-c')).toBe(true);
    expect(isMetadataKey('')).toBe(false);
    expect(isMetadataKey('a b')).toBe(false);
    expect(isMetadataKey('k'.repeat(65))).toBe(false);
    expect(isMetadataValue('')).toBe(true);
    expect(isMetadataValue('é'.repeat(128))).toBe(true);
    expect(isMetadataValue('é'.repeat(129))).toBe(false);
    expect(isMetadataValue('a\u0000b')).toBe(false);
  });
});
