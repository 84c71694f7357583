import { redactedUrlAttributes } from './url-redaction';

describe('redactedUrlAttributes', () => {
  it("redacts a GitHub App manifest's code in the conversion's path", () => {
    expect(
      redactedUrlAttributes({ origin: 'https://api.github.com', path: '/app-manifests/a1b2c3/conversions' }),
    ).toEqual({
      'url.full': 'https://api.github.com/app-manifests/REDACTED/conversions',
      'url.path': '/app-manifests/REDACTED/conversions',
      'url.query': '',
    });
  });

  it('redacts credential query values and keeps the others', () => {
    const attributes = redactedUrlAttributes({
      origin: 'http://127.0.0.1:8080',
      path: '/v1/integrations/github-apps/manifest/callback?code=c0de&state=st4te&x=1',
    });
    expect(attributes['url.full']).toBe(
      'http://127.0.0.1:8080/v1/integrations/github-apps/manifest/callback?code=REDACTED&state=REDACTED&x=1',
    );
    expect(JSON.stringify(attributes)).not.toMatch(/c0de|st4te/);
  });

  it('leaves a URL without credentials to the instrumentation', () => {
    expect(
      redactedUrlAttributes({ origin: 'https://api.github.com', path: '/repos/o/r/pulls?page=2' }),
    ).toEqual({});
  });
});
