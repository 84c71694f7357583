import { generateKeyPairSync } from 'node:crypto';
import { startScriptedGitHub, type ScriptedGitHub } from '@conveyor/testing';
import { EgressPolicy } from '../egress/egress-policy';
import { AppCredentialsRefused, InstallationTokens, parseAppPrivateKey, verifyApp } from './github-app-auth';
import { githubRequest, type GitHubApi } from './github-rest';

// Against the scripted GitHub, which verifies the App's JWT with the registered public key as GitHub does.
describe('GitHub App authentication', () => {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const app = { appId: '12', privateKey: keys.privateKey };
  let github: ScriptedGitHub;
  let api: GitHubApi;

  beforeAll(async () => {
    github = await startScriptedGitHub({
      token: 'unused',
      branchExists: () => true,
      app: { id: '12', slug: 'bot', publicKey: keys.publicKey, installations: [3] },
    });
    api = { baseUrl: github.url, policy: new EgressPolicy([new URL(github.url).host]), timeoutMs: 5000 };
  });
  afterAll(() => github.close());
  afterEach(() => (github.appRevoked = false));

  it("signs a JWT GitHub accepts, and one with another key is refused with GitHub's reason", async () => {
    await expect(verifyApp(api, app)).resolves.toEqual({ slug: 'bot' });
    const other = { appId: '12', privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey };
    await expect(verifyApp(api, other)).rejects.toThrow(AppCredentialsRefused);
    await expect(verifyApp(api, other)).rejects.toThrow('A JSON web token could not be decoded');
  });

  it('refuses keys that are not the RSA key GitHub issues', () => {
    expect(() => parseAppPrivateKey('not a key')).toThrow('private_key is not a PEM private key');
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    expect(() => parseAppPrivateKey(ec.toString())).toThrow('must be the RSA key');
  });

  it('issues a token limited to one repository, cached until five minutes before it expires', async () => {
    let now = Date.now();
    const tokens = new InstallationTokens(api, () => now);
    const token = await tokens.token('gha_1', app, 3, 'widgets');
    expect(await tokens.token('gha_1', app, 3, 'widgets')).toBe(token);
    expect(github.installationTokens.size).toBe(1);
    expect((await githubRequest(api, token, 'GET', '/repos/acme/widgets')).status).toBe(200);
    expect((await githubRequest(api, token, 'GET', '/repos/acme/gadgets')).status).toBe(403);
    now += 56 * 60_000;
    expect(await tokens.token('gha_1', app, 3, 'widgets')).not.toBe(token);
  });

  it("a revoked App or an unknown installation is refused with GitHub's reason", async () => {
    const tokens = new InstallationTokens(api);
    await expect(tokens.token('gha_2', app, 99, 'widgets')).rejects.toThrow('Not Found');
    github.appRevoked = true;
    await expect(tokens.token('gha_2', app, 3, 'widgets')).rejects.toThrow('Integration not found');
  });
});
