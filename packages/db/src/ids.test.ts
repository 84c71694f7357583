import { newEnvironmentId, newId, newUuid, randomAlphanumeric } from './ids';

describe('ids', () => {
  it('newEnvironmentId is 22 characters from [A-Za-z0-9]', () => {
    for (let i = 0; i < 100; i++) expect(newEnvironmentId()).toMatch(/^[A-Za-z0-9]{22}$/);
  });

  it('newId prefixes a random alphanumeric part', () => {
    expect(newId('team')).toMatch(/^team_[A-Za-z0-9]{24}$/);
    expect(newId('team')).not.toBe(newId('team'));
  });

  it('randomAlphanumeric uses the whole alphabet', () => {
    const seen = new Set(randomAlphanumeric(5000));
    expect(seen.size).toBe(62);
  });

  it('newUuid is a v4 UUID', () => {
    expect(newUuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
