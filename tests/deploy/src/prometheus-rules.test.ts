import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { observabilityTool } from '@conveyor/testing';

const DIR = path.resolve(__dirname, '../../../deploy/observability');

/** The shipped rules are valid and behave as their fixtures say (docs/observability.md). */
describe('deploy/observability rules (promtool)', () => {
  const promtool = (...args: string[]) =>
    execFileSync(observabilityTool('promtool'), args, { cwd: DIR, encoding: 'utf8', stdio: 'pipe' });

  it('pass promtool check rules', () => {
    expect(promtool('check', 'rules', 'rules.yml')).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('fire and stay quiet as the fixtures of rules.test.yml expect', () => {
    expect(promtool('test', 'rules', 'rules.test.yml')).toMatch(/SUCCESS/);
  });
});
