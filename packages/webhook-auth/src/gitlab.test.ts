import type { WebhookHeaders } from './types';
import { verifySignature } from './verify-signature';

const SECRET = 'gl-token-0123456789';
const verify = (headers: WebhookHeaders, secret = SECRET) =>
  verifySignature({ scheme: 'gitlab', secret, headers, rawBody: Buffer.from('{}'), now: new Date(0) });

describe('gitlab', () => {
  it('accepts the exact token in any header case', () => {
    expect(verify({ 'x-gitlab-token': SECRET })).toEqual({ ok: true });
    expect(verify({ 'X-Gitlab-Token': SECRET })).toEqual({ ok: true });
  });

  it('accepts a token that itself contains ", "', () => {
    expect(verify({ 'x-gitlab-token': 'a, b' }, 'a, b')).toEqual({ ok: true });
  });

  it.each([
    ['missing', {}, 'missing header x-gitlab-token'],
    ['empty', { 'x-gitlab-token': '' }, 'missing header x-gitlab-token'],
    ['a prefix of the secret', { 'x-gitlab-token': SECRET.slice(0, -1) }, 'token mismatch'],
    ['longer than the secret', { 'x-gitlab-token': `${SECRET}0` }, 'token mismatch'],
    ['different in case', { 'x-gitlab-token': SECRET.toUpperCase() }, 'token mismatch'],
    ['duplicated', { 'x-gitlab-token': [SECRET, SECRET] }, 'duplicated header x-gitlab-token'],
    ['comma-joined', { 'x-gitlab-token': `${SECRET}, ${SECRET}` }, 'token mismatch'],
  ])('rejects a token that is %s', (_name, headers, reason) => {
    expect(verify(headers)).toEqual({ ok: false, reason });
  });
});
