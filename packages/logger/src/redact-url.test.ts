import { redactUrl } from './redact-url';

describe('redactUrl', () => {
  it('hides signed download tokens, url_tokens, credential query parameters and userinfo', () => {
    expect(redactUrl('/v1/blobs/YXJ0aWZhY3Rz.1767225600.c2ln')).toBe('/v1/blobs/{token}');
    expect(redactUrl('/webhooks/w/wh_abc/s3cr3t')).toBe('/webhooks/w/wh_abc/{token}');
    expect(redactUrl('/webhooks/w/wh_abc')).toBe('/webhooks/w/wh_abc');
    expect(redactUrl('https://bucket.s3/k?X-Amz-Credential=AK&X-Amz-Signature=abc&x=1')).toBe(
      'https://bucket.s3/k?X-Amz-Credential=***&X-Amz-Signature=***&x=1',
    );
    expect(redactUrl('https://user:ghp_secret@github.com/acme/api.git')).toBe(
      'https://***@github.com/acme/api.git',
    );
    expect(redactUrl('/v1/agent/runs?token=abc')).toBe('/v1/agent/runs?token=***');
    expect(redactUrl("git ls-remote 'https://x:y@host/r.git' failed")).toBe(
      "git ls-remote 'https://***@host/r.git' failed",
    );
  });
});
