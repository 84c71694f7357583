import {
  credentialProblem,
  defaultSecretName,
  generatesSecret,
  ingressUrl,
  isValidHeaderName,
} from './webhook-rules';

describe('webhook rules', () => {
  it('suggests a team-secret name from the webhook name', () => {
    expect(defaultSecretName('github-events')).toBe('WEBHOOK_GITHUB_EVENTS_SECRET');
    expect(defaultSecretName('stripe.v2')).toBe('WEBHOOK_STRIPE_V2_SECRET');
    expect(defaultSecretName('--')).toBe('WEBHOOK_UNNAMED_SECRET');
  });

  it('builds ingress URLs, with the {token} placeholder in url_token mode', () => {
    expect(ingressUrl('https://hooks.example.com/', 'wh_1', 'token')).toBe(
      'https://hooks.example.com/webhooks/w/wh_1',
    );
    expect(ingressUrl('https://hooks.example.com', 'wh_1', 'url_token')).toBe(
      'https://hooks.example.com/webhooks/w/wh_1/{token}',
    );
    expect(ingressUrl('https://hooks.example.com', 'wh_1', 'url_token', 'abc')).toBe(
      'https://hooks.example.com/webhooks/w/wh_1/abc',
    );
  });

  it('refuses credentials that cannot work in their mode', () => {
    expect(credentialProblem('url_token', null, 'has spaces and/slashes!!')).toMatch(/not URL-safe/);
    expect(credentialProblem('url_token', null, 'short')).toMatch(/not URL-safe/);
    expect(credentialProblem('url_token', null, 'A'.repeat(16))).toBeUndefined();
    expect(credentialProblem('token', null, 'anything goes here, even spaces')).toBeUndefined();
    expect(credentialProblem('signature', 'standard-webhooks', 'not base64!')).toMatch(/Standard Webhooks/);
    expect(
      credentialProblem('signature', 'standard-webhooks', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'),
    ).toBeUndefined();
    expect(credentialProblem('signature', 'stripe', 'whsec_anything')).toBeUndefined();
    expect(credentialProblem('token', null, '')).toBe('is empty');
  });

  it('knows which secrets the platform generates', () => {
    expect(generatesSecret('token', null)).toBe(true);
    expect(generatesSecret('url_token', null)).toBe(true);
    expect(generatesSecret('signature', 'standard-webhooks')).toBe(true);
    expect(generatesSecret('signature', 'stripe')).toBe(false);
    expect(generatesSecret('signature', 'github')).toBe(false);
  });

  it('accepts only HTTP header names for the delivery-ID header', () => {
    expect(isValidHeaderName('X-Request-Id')).toBe(true);
    expect(isValidHeaderName('bad header')).toBe(false);
    expect(isValidHeaderName('')).toBe(false);
  });
});
