import { assertValidBlobKey } from './blob-store';

describe('blob keys', () => {
  it('accepts path-like keys and refuses empty, traversal and odd characters', () => {
    expect(() => assertValidBlobKey('transcripts/r1/1.jsonl')).not.toThrow();
    for (const bad of ['', '/a', 'a/', 'a//b', 'a/../b', './a', 'a b', 'a\nb', 'x'.repeat(513)]) {
      expect(() => assertValidBlobKey(bad)).toThrow(RangeError);
    }
  });
});
