import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// One place for a workspace's own test helpers, src/test-support/, which its build leaves out of dist/ (helpers
// shared across workspaces are @conveyor/testing, a dev dependency). A helper anywhere else ships with the service.
const ROOT = path.resolve(__dirname, '../../..');
const WORKSPACES = ['packages', 'services'].flatMap((dir) =>
  readdirSync(path.join(ROOT, dir)).map((name) => path.join(dir, name)),
);

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' });
}

describe('test support', () => {
  it.each(WORKSPACES.filter((w) => existsSync(path.join(ROOT, w, 'tsconfig.build.json'))))(
    '%s builds without src/test-support',
    (workspace) => {
      const build = JSON.parse(readFileSync(path.join(ROOT, workspace, 'tsconfig.build.json'), 'utf8')) as {
        exclude?: string[];
      };
      expect(build.exclude).toContain('src/test-support');
    },
  );

  it('lives in src/test-support/ folders only', () => {
    const strays = WORKSPACES.filter((w) => existsSync(path.join(ROOT, w, 'src'))).flatMap((workspace) =>
      filesUnder(path.join(ROOT, workspace, 'src'))
        .filter((file) => /(^|\/)test-support[^/]*\.ts$/.test(file))
        .map((file) => path.join(workspace, 'src', file)),
    );
    expect(strays).toEqual([]);
  });
});
