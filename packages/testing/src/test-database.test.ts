import { infraEnv } from './infra-env';
import { templateDatabaseName } from './test-database';
import { uniqueName } from './unique-name';

describe('templateDatabaseName', () => {
  it('is a short, valid identifier that follows the checksum', () => {
    const a = templateDatabaseName('a'.repeat(64));
    expect(a).toBe(`conveyor_tpl_${'a'.repeat(16)}`);
    expect(templateDatabaseName('b'.repeat(64))).not.toBe(a);
  });
});

describe('infraEnv', () => {
  it('defaults to the local servers, treating empty variables as unset', () => {
    expect(infraEnv({ DATABASE_URL: '' })).toEqual({
      databaseUrl: 'postgresql://conveyor:conveyor@127.0.0.1:5432/conveyor',
      redisUrl: 'redis://127.0.0.1:6379',
      kafkaBrokers: ['127.0.0.1:9092'],
    });
  });

  it('reads the variables, splitting KAFKA_BROKERS', () => {
    const env = infraEnv({
      DATABASE_URL: 'postgresql://x/y',
      REDIS_URL: 'redis://r:1',
      KAFKA_BROKERS: 'a:1, b:2',
    });
    expect(env).toEqual({
      databaseUrl: 'postgresql://x/y',
      redisUrl: 'redis://r:1',
      kafkaBrokers: ['a:1', 'b:2'],
    });
  });
});

describe('uniqueName', () => {
  it('is prefix-uuid and unique', () => {
    expect(uniqueName('test')).toMatch(/^test-[0-9a-f-]{36}$/);
    expect(uniqueName('test')).not.toBe(uniqueName('test'));
  });
});
