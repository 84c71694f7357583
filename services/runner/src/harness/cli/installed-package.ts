import path from 'node:path';

/**
 * A file of an installed npm package: the CLIs are dependencies of the runner, pinned in its package.json, and a
 * profile's `command` starts one from there. The sandbox sees the runner's installation read-only.
 */
export function packageFile(pkg: string, file: string): string {
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);
}
