import type { EventEndpoint } from '@conveyor/db';
import { eventEndpointSecretContext as secretContext, type SecretCipher } from '../secrets/secret-cipher';

export function encryptEndpointSecret(
  cipher: SecretCipher,
  endpointId: string,
  secret: string,
): { secretCiphertext: Uint8Array<ArrayBuffer>; secretKeyId: string } {
  const { ciphertext, keyId } = cipher.encrypt(secret, secretContext(endpointId));
  return { secretCiphertext: new Uint8Array(ciphertext), secretKeyId: keyId };
}

/** The secrets that sign now: the current one, and the rotated-out one until its grace period ends. */
export function signingSecrets(cipher: SecretCipher, endpoint: EventEndpoint, now: Date): string[] {
  const context = secretContext(endpoint.id);
  const secrets = [cipher.decrypt(endpoint.secretCiphertext, endpoint.secretKeyId, context)];
  if (
    endpoint.previousCiphertext &&
    endpoint.previousKeyId &&
    endpoint.previousSecretUntil &&
    endpoint.previousSecretUntil > now
  )
    secrets.push(cipher.decrypt(endpoint.previousCiphertext, endpoint.previousKeyId, context));
  return secrets;
}
