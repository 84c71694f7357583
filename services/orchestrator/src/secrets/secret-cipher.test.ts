import { randomBytes } from 'node:crypto';
import { loadCliConfig } from '../config';
import {
  keyIdOf,
  SecretCipher,
  SecretCipherError,
  teamSecretContext,
  webhookSecretContext,
} from './secret-cipher';

describe('SecretCipher', () => {
  const key = randomBytes(32);
  const cipher = new SecretCipher(key);

  it('round-trips with a fresh IV each time and never stores the plaintext', () => {
    const a = cipher.encrypt('s3cr3t value', 'ctx');
    const b = cipher.encrypt('s3cr3t value', 'ctx');
    expect(a.keyId).toBe(keyIdOf(key));
    expect(a.ciphertext.equals(b.ciphertext)).toBe(false);
    expect(a.ciphertext.includes(Buffer.from('s3cr3t'))).toBe(false);
    expect(a.ciphertext.length).toBe(1 + 12 + 16 + Buffer.byteLength('s3cr3t value'));
    expect(cipher.decrypt(a.ciphertext, a.keyId, 'ctx')).toBe('s3cr3t value');
  });

  it('binds the ciphertext to its context (associated data)', () => {
    const { ciphertext, keyId } = cipher.encrypt('v', teamSecretContext('team_a', 'X'));
    expect(() => cipher.decrypt(ciphertext, keyId, teamSecretContext('team_b', 'X'))).toThrow(
      SecretCipherError,
    );
    expect(() => cipher.decrypt(ciphertext, keyId, webhookSecretContext('wh_1'))).toThrow(SecretCipherError);
  });

  it('detects tampering and unknown keys', () => {
    const { ciphertext, keyId } = cipher.encrypt('value', 'ctx');
    const tampered = Buffer.from(ciphertext);
    tampered.writeUInt8(tampered.readUInt8(tampered.length - 1) ^ 1, tampered.length - 1);
    expect(() => cipher.decrypt(tampered, keyId, 'ctx')).toThrow(/authentication/);
    expect(() => cipher.decrypt(ciphertext, 'nope', 'ctx')).toThrow(/no key/);
    expect(() => cipher.decrypt(Buffer.from([9, 1, 2]), keyId, 'ctx')).toThrow(/format/);
  });

  it('decrypts with previous keys during a rotation and encrypts with the current one', () => {
    const old = new SecretCipher(key);
    const { ciphertext, keyId } = old.encrypt('legacy', 'ctx');
    const rotated = new SecretCipher(randomBytes(32), [key]);
    expect(rotated.decrypt(ciphertext, keyId, 'ctx')).toBe('legacy');
    expect(rotated.encrypt('new', 'ctx').keyId).not.toBe(keyId);
  });

  it('reads its keys from the config and refuses to work without one', () => {
    const configured = randomBytes(32).toString('base64');
    expect(
      SecretCipher.fromConfig({ CONVEYOR_SECRETS_KEY: configured, CONVEYOR_SECRETS_PREVIOUS_KEYS: [] }).keyId,
    ).toBe(keyIdOf(Buffer.from(configured, 'base64')));
    // No built-in key in any mode.
    expect(() => SecretCipher.fromConfig({ CONVEYOR_SECRETS_PREVIOUS_KEYS: [] })).toThrow(
      /CONVEYOR_SECRETS_KEY is required/,
    );
    expect(() =>
      SecretCipher.fromConfig({ CONVEYOR_SECRETS_KEY: 'c2hvcnQ=', CONVEYOR_SECRETS_PREVIOUS_KEYS: [] }),
    ).toThrow(/32 bytes/);
    const previous = randomBytes(32);
    const cipher2 = SecretCipher.fromConfig(
      loadCliConfig({
        CONVEYOR_SECRETS_KEY: configured,
        CONVEYOR_SECRETS_PREVIOUS_KEYS: `${previous.toString('base64')}, `,
      }),
    );
    const legacy = new SecretCipher(previous).encrypt('x', 'c');
    expect(cipher2.decrypt(legacy.ciphertext, legacy.keyId, 'c')).toBe('x');
  });
});
