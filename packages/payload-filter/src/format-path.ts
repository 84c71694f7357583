const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `root.key["odd key"][2]`: keys that are not identifiers are quoted, so paths stay unambiguous. */
export function formatPath(root: string, segments: readonly (string | number)[]): string {
  let path = root;
  for (const segment of segments) {
    if (typeof segment === 'number') path += `[${segment}]`;
    else path += IDENTIFIER.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`;
  }
  return path;
}
