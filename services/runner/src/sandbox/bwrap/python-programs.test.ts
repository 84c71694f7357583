import { spawnSync } from 'node:child_process';
import path from 'node:path';

// The sandbox's Python programs (build_seccomp_filter.py, privileged/idmapped_mount.py) with their own unittest
// suites, run by the Python the runner runs them with (Debian's, which has python3-seccomp).
describe.each(['.', 'privileged'])('the Python programs in sandbox/bwrap/%s', (dir) => {
  it('pass their unittest suite', () => {
    const run = spawnSync(
      '/usr/bin/python3',
      ['-B', '-m', 'unittest', 'discover', '-s', path.join(__dirname, dir), '-p', 'test_*.py', '-v'],
      { encoding: 'utf8', env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } },
    );
    expect({ status: run.status, summary: run.stderr.trim().split('\n').at(-1) }).toEqual({
      status: 0,
      summary: 'OK',
    });
    expect(run.stderr).toMatch(/^Ran [1-9]\d* tests? in /m);
  });
});
