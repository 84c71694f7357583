import { canonicalizeUrl } from './canonical-url';

describe('canonicalizeUrl', () => {
  it('gives spellings of one address the same key', () => {
    const canonical = 'https://linear.app/acme/issue/ENG-12';
    for (const spelling of [
      'https://linear.app/acme/issue/ENG-12',
      'HTTPS://Linear.App/acme/issue/ENG-12',
      'https://linear.app:443/acme/issue/ENG-12',
      'https://linear.app/acme/issue/ENG-12/',
      'https://linear.app/acme/issue/ENG-12#comment-3',
      'https://linear.app/acme/./issue/x/../ENG-12',
      '  https://linear.app/acme/issue/ENG-12?',
    ]) {
      expect(canonicalizeUrl(spelling)).toBe(canonical);
    }
  });

  it('keeps path case, query order and the root slash', () => {
    expect(canonicalizeUrl('https://github.com/Acme/API/pull/7?b=2&a=1')).toBe(
      'https://github.com/Acme/API/pull/7?b=2&a=1',
    );
    expect(canonicalizeUrl('http://example.com')).toBe('http://example.com/');
    expect(canonicalizeUrl('http://example.com:8080/x')).toBe('http://example.com:8080/x');
    expect(canonicalizeUrl('https://example.com/a b')).toBe('https://example.com/a%20b');
  });

  it('refuses what is not a plain http(s) URL', () => {
    for (const bad of [
      '',
      'not a url',
      'ftp://example.com/x',
      'javascript:alert(1)',
      'https://user:pw@example.com/',
      'mailto:a@b.c',
      `https://e.com/${'x'.repeat(2100)}`,
    ]) {
      expect(canonicalizeUrl(bad)).toBeUndefined();
    }
  });
});
