import { z } from 'zod';
import { kafkaSecurityEnv, kafkaSecurityOptions, KafkaSecurityError } from './kafka-security';

const KafkaConstructor = jest.fn();
jest.mock('kafkajs', () => ({
  ...jest.requireActual('kafkajs'),
  Kafka: jest.fn((config: unknown) => KafkaConstructor(config)),
}));
// Imported after the mock so createKafka builds its client with the spy.
import { createKafka } from './kafka-client';

const parse = (env: Record<string, string>) => z.object(kafkaSecurityEnv).parse(env);
const files: Record<string, string> = { '/ca.pem': 'CA PEM', '/cert.pem': 'CERT PEM', '/key.pem': 'KEY PEM' };
const readFile = (p: string): string => {
  const content = files[p];
  if (content === undefined) throw new Error(`no file ${p}`);
  return content;
};

describe('Kafka TLS and SASL from config', () => {
  it('defaults to plain text without authentication (the local broker)', () => {
    expect(kafkaSecurityOptions(parse({}), readFile)).toEqual({});
  });

  it('TLS with a private CA and a client certificate; SCRAM-SHA-512 over it', () => {
    const options = kafkaSecurityOptions(
      parse({
        KAFKA_SSL: 'true',
        KAFKA_SSL_CA_FILE: '/ca.pem',
        KAFKA_SSL_CERT_FILE: '/cert.pem',
        KAFKA_SSL_KEY_FILE: '/key.pem',
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: 'conveyor',
        KAFKA_SASL_PASSWORD: 'pw',
      }),
      readFile,
    );
    expect(options).toEqual({
      ssl: { rejectUnauthorized: true, ca: ['CA PEM'], cert: 'CERT PEM', key: 'KEY PEM' },
      sasl: { mechanism: 'scram-sha-512', username: 'conveyor', password: 'pw' },
    });
  });

  it('SCRAM-SHA-256 may run without TLS (the password never crosses the wire); PLAIN may not', () => {
    const scram = parse({
      KAFKA_SASL_MECHANISM: 'scram-sha-256',
      KAFKA_SASL_USERNAME: 'u',
      KAFKA_SASL_PASSWORD: 'p',
    });
    expect(kafkaSecurityOptions(scram, readFile)).toEqual({
      sasl: { mechanism: 'scram-sha-256', username: 'u', password: 'p' },
    });
    const plain = { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' };
    expect(() => kafkaSecurityOptions(parse(plain), readFile)).toThrow(/KAFKA_SSL=true/);
    expect(kafkaSecurityOptions(parse({ ...plain, KAFKA_SSL: 'true' }), readFile)).toEqual({
      ssl: { rejectUnauthorized: true },
      sasl: { mechanism: 'plain', username: 'u', password: 'p' },
    });
  });

  it('refuses settings that would silently do nothing or leak', () => {
    expect(() =>
      kafkaSecurityOptions(
        parse({ KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SASL_USERNAME: 'u' }),
        readFile,
      ),
    ).toThrow(KafkaSecurityError);
    expect(() => kafkaSecurityOptions(parse({ KAFKA_SSL_CA_FILE: '/ca.pem' }), readFile)).toThrow(
      /KAFKA_SSL is not true/,
    );
    expect(() =>
      kafkaSecurityOptions(parse({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: '/cert.pem' }), readFile),
    ).toThrow(/go together/);
    expect(() => parse({ KAFKA_SASL_MECHANISM: 'gssapi' })).toThrow();
    expect(() => parse({ KAFKA_SSL: 'yes' })).toThrow();
  });

  it('the options reach the kafkajs client', () => {
    const security = kafkaSecurityOptions(
      parse({
        KAFKA_SSL: 'true',
        KAFKA_SASL_MECHANISM: 'plain',
        KAFKA_SASL_USERNAME: 'u',
        KAFKA_SASL_PASSWORD: 'p',
      }),
      readFile,
    );
    createKafka({ clientId: 'test', brokers: ['broker:9093'], security });
    expect(KafkaConstructor).toHaveBeenLastCalledWith(
      expect.objectContaining({
        brokers: ['broker:9093'],
        ssl: { rejectUnauthorized: true },
        sasl: { mechanism: 'plain', username: 'u', password: 'p' },
      }),
    );
    createKafka({ clientId: 'test', brokers: ['127.0.0.1:9092'] });
    const plain = KafkaConstructor.mock.lastCall![0] as Record<string, unknown>;
    expect(plain.ssl).toBeUndefined();
    expect(plain.sasl).toBeUndefined();
  });
});
