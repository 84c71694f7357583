import { z } from 'zod';
import { ConfigError, loadConfig, redactConfig } from './load-config';
import { csv, port } from './common';

describe('loadConfig', () => {
  const schema = z.object({ PORT: port(8080), BROKERS: csv('a:1'), NAME: z.string().min(1) });

  it('coerces and applies defaults', () => {
    expect(loadConfig(schema, { NAME: 'x', PORT: '9000' })).toEqual({
      NAME: 'x',
      PORT: 9000,
      BROKERS: ['a:1'],
    });
  });

  it('lists every problem at once', () => {
    try {
      loadConfig(schema, { PORT: 'abc' });
      throw new Error('expected failure');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems).toHaveLength(2);
      expect((err as ConfigError).message).toMatch(/PORT/);
      expect((err as ConfigError).message).toMatch(/NAME/);
    }
  });

  it('redacts secrets and URL passwords', () => {
    expect(redactConfig({ API_SECRET: 's', DATABASE_URL: 'postgresql://u:pw@h/db', PORT: 1 })).toEqual({
      API_SECRET: '[redacted]',
      DATABASE_URL: 'postgresql://u:***@h/db',
      PORT: 1,
    });
  });
});
