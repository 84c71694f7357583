import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const FORMAT_V1 = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** The secrets keys as config.ts parses them (orchestrator and CLI alike). */
export interface SecretKeys {
  /** 32 bytes, base64: the key new ciphertexts are written with. */
  CONVEYOR_SECRETS_KEY?: string | undefined;
  /** Earlier keys, still accepted for decryption while rows are re-encrypted (key rotation). */
  CONVEYOR_SECRETS_PREVIOUS_KEYS: readonly string[];
}

export class SecretCipherError extends Error {
  override readonly name = 'SecretCipherError';
}

function parseKey(encoded: string, what: string): Buffer {
  const key = Buffer.from(encoded.trim(), 'base64');
  if (key.length !== KEY_BYTES)
    throw new SecretCipherError(
      `${what} must be ${KEY_BYTES} bytes, base64-encoded (got ${key.length} bytes)`,
    );
  return key;
}

/** A key's public identifier: stored beside each ciphertext so decryption picks the right key after a rotation. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/**
 * AES-256-GCM for team secrets and webhook credentials at rest. A ciphertext is `[format=1][12-byte IV][16-byte tag]
 * [ciphertext]`; the caller's `context` (e.g. `team-secret:<team>:<name>`) is bound as associated data, so a
 * ciphertext copied onto another row fails to decrypt instead of leaking into the wrong place.
 */
export class SecretCipher {
  readonly keyId: string;
  private readonly keys = new Map<string, Buffer>();

  constructor(current: Buffer, previous: readonly Buffer[] = []) {
    if (current.length !== KEY_BYTES)
      throw new SecretCipherError(`the secrets key must be ${KEY_BYTES} bytes`);
    this.keyId = keyIdOf(current);
    this.keys.set(this.keyId, current);
    for (const key of previous) this.keys.set(keyIdOf(key), key);
  }

  /** Refuses to run without a configured key, in every mode: there is no built-in key (docs/service-trust.md). */
  static fromConfig(keys: SecretKeys): SecretCipher {
    const previous = keys.CONVEYOR_SECRETS_PREVIOUS_KEYS.map((k, i) =>
      parseKey(k, `CONVEYOR_SECRETS_PREVIOUS_KEYS[${i}]`),
    );
    const configured = keys.CONVEYOR_SECRETS_KEY?.trim();
    if (!configured) {
      throw new SecretCipherError(
        'CONVEYOR_SECRETS_KEY is required (32 random bytes, base64: `conveyor keys init --file .conveyor/keys.env`)',
      );
    }
    return new SecretCipher(parseKey(configured, 'CONVEYOR_SECRETS_KEY'), previous);
  }

  encrypt(plaintext: string, context: string): { ciphertext: Buffer; keyId: string } {
    const key = this.keys.get(this.keyId)!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return {
      ciphertext: Buffer.concat([Buffer.from([FORMAT_V1]), iv, cipher.getAuthTag(), body]),
      keyId: this.keyId,
    };
  }

  /** Throws SecretCipherError for an unknown key, a tampered ciphertext or the wrong context. */
  decrypt(ciphertext: Uint8Array, keyId: string, context: string): string {
    const key = this.keys.get(keyId);
    if (!key)
      throw new SecretCipherError(
        `no key with id ${keyId} is configured (CONVEYOR_SECRETS_KEY / CONVEYOR_SECRETS_PREVIOUS_KEYS)`,
      );
    const data = Buffer.from(ciphertext);
    if (data.length < 1 + IV_BYTES + TAG_BYTES || data[0] !== FORMAT_V1)
      throw new SecretCipherError('unrecognised ciphertext format');
    const iv = data.subarray(1, 1 + IV_BYTES);
    const tag = data.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([
        decipher.update(data.subarray(1 + IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch (err) {
      throw new SecretCipherError('ciphertext failed authentication (wrong key or context, or tampered)', {
        cause: err,
      } as ErrorOptions);
    }
  }
}

/** Associated data of a team secret's ciphertext. */
export const teamSecretContext = (teamId: string, name: string): string => `team-secret:${teamId}:${name}`;

/** Associated data of a webhook's credential snapshot. */
export const webhookSecretContext = (webhookUid: string): string => `webhook:${webhookUid}`;

/** Associated data of an event endpoint's signing secret (current and rotated-out alike). */
export const eventEndpointSecretContext = (endpointId: string): string => `event-endpoint:${endpointId}`;

/** Associated data of a GitHub App's private key. */
export const githubAppKeyContext = (githubAppId: string): string => `github-app:${githubAppId}`;

/** Associated data of a Slack app's bot token. */
export const slackAppTokenContext = (slackAppId: string): string => `slack-app:${slackAppId}`;

/** Associated data of a Linear integration's API key. */
export const linearKeyContext = (integrationId: string): string => `linear:${integrationId}`;

/** Associated data of a run's adoption record (its lease: the run's key and model token). */
export const runLeaseContext = (runId: string): string => `run-lease:${runId}`;
