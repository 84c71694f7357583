import { parseSkillFile, skillDirectoryName } from './skill-file';

describe('parseSkillFile', () => {
  it('reads name, description and the instructions after the front matter', () => {
    const parsed = parseSkillFile(
      '---\nname: deploy\ndescription: Deploys the service\n---\n\nRun the deploy script.\nThen verify.\n',
      'dir',
    );
    expect(parsed).toEqual({
      ok: true,
      name: 'deploy',
      description: 'Deploys the service',
      instructions: 'Run the deploy script.\nThen verify.',
    });
  });

  it('falls back to the directory name and accepts CRLF and a BOM', () => {
    expect(parseSkillFile('\uFEFF---\r\ndescription: d\r\n---\r\nbody', 'audit')).toEqual({
      ok: true,
      name: 'audit',
      description: 'd',
      instructions: 'body',
    });
  });

  it.each([
    ['no front matter', '# Deploy\nsteps', /must start with YAML front matter/],
    ['unterminated front matter', '---\nname: x\ndescription: y\n', /not closed/],
    ['invalid YAML', '---\nname: [unclosed\ndescription: y\n---\nbody', /invalid YAML/],
    ['duplicate keys', '---\nname: a\nname: b\ndescription: y\n---\n', /invalid YAML/],
    ['a list instead of a mapping', '---\n- a\n- b\n---\n', /must be a YAML mapping/],
    ['a missing description', '---\nname: x\n---\nbody', /description is required/],
    ['a non-string name', '---\nname: 42\ndescription: y\n---\n', /name must be a non-empty string/],
  ])('reports %s as malformed', (_what, text, error) => {
    const parsed = parseSkillFile(text, 'fallback');
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toMatch(error);
  });
});

describe('skillDirectoryName', () => {
  it('names a skill after its directory, or the repository at the root', () => {
    expect(skillDirectoryName('.claude/skills/deploy/SKILL.md', 'api')).toBe('deploy');
    expect(skillDirectoryName('SKILL.md', 'api')).toBe('api');
  });
});
