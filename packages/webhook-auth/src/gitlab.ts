import { readHeader } from './headers';
import { secretsEqual } from './hmac';
import { fail, OK, type SchemeVerifyInput, type VerifyResult } from './types';

export const GITLAB_TOKEN_HEADER = 'x-gitlab-token';

/** GitLab sends the shared secret itself (no body signature), so this is a constant-time token compare. */
export function verifyGitlab({ secret, headers }: SchemeVerifyInput): VerifyResult {
  const token = readHeader(headers, GITLAB_TOKEN_HEADER, { opaque: true });
  if (!token.ok) return token;
  return secretsEqual(secret, token.value) ? OK : fail('token mismatch');
}
