import { createEnvironmentBody, environmentBody, updateEnvironmentBody } from './environment-body';

const issues = (result: {
  success: boolean;
  error?: { issues: Array<{ path: unknown[]; message: string }> };
}) => (result.success ? [] : result.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`));

describe('the environment body', () => {
  it('refuses unknown keys at the top and inside repositories, on create, update and as the orchestrator reads it', () => {
    for (const schema of [createEnvironmentBody, updateEnvironmentBody, environmentBody]) {
      expect(issues(schema.safeParse({ name: 'e', allowed_host: ['x.dev'] }))).toEqual([
        ": Unrecognized key(s) in object: 'allowed_host'",
      ]);
      expect(
        schema.safeParse({ name: 'e', repositories: [{ url: 'https://x.dev/r.git', branch: 'main' }] })
          .success,
      ).toBe(false);
      expect(
        schema.safeParse({ name: 'e', github_repos: [{ owner: 'o', repo: 'r', extra: 1 }] }).success,
      ).toBe(false);
    }
  });

  it('refuses a checkout directory outside the workspace and an address as an egress host', () => {
    expect(issues(environmentBody.safeParse({ repositories: [{ url: 'u', directory: '../up' }] }))).toEqual([
      'repositories.0.directory: must be a relative path inside the workspace',
    ]);
    expect(issues(environmentBody.safeParse({ allowed_hosts: ['10.0.0.1'] }))).toEqual([
      'allowed_hosts.0: must be a host name, not an address',
    ]);
  });

  it('takes the whole contract body, and team only at creation', () => {
    const body = {
      name: 'env',
      description: null,
      docker_image: 'node:20',
      github_repos: [{ owner: 'o', repo: 'r' }],
      repositories: [
        { url: 'https://x.dev/r.git', directory: 'src/r', ref: 'main', push_secret_name: 'PUSH' },
      ],
      setup_commands: ['npm ci'],
      allowed_hosts: ['*.npmjs.org'],
      failure_session_retention_minutes: 10,
      providers: {},
      team: false,
    };
    expect(createEnvironmentBody.parse(body)).toEqual(body);
    expect(updateEnvironmentBody.safeParse(body).success).toBe(false);
  });
});
