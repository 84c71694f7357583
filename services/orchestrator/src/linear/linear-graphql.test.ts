import { startScriptedLinear, type ScriptedLinear } from '@conveyor/testing';
import { EgressPolicy } from '../egress/egress-policy';
import { commentCreate, LinearCredentialsRefused, viewer, type LinearApi } from './linear-graphql';

// Linear's GraphQL API through the egress rules, against a scripted Linear that checks the key as Linear does.
describe('linearRequest', () => {
  const VIEWER = { id: 'user-agent', name: 'conveyor' };
  let linear: ScriptedLinear;
  let api: LinearApi;
  beforeAll(async () => {
    linear = await startScriptedLinear({
      apiKey: 'lin_api_key',
      oauthToken: 'lin_oauth_token',
      viewer: VIEWER,
    });
    api = { url: linear.url, policy: new EgressPolicy([new URL(linear.url).host]), timeoutMs: 5000 };
  });
  afterAll(() => linear.close());
  afterEach(() => {
    linear.revoked = false;
    linear.unavailable = 0;
  });

  it('sends a personal API key as it is and an OAuth token as Bearer, as Linear takes them', async () => {
    await expect(viewer(api, 'lin_api_key')).resolves.toEqual(VIEWER);
    await expect(viewer(api, 'lin_oauth_token')).resolves.toEqual(VIEWER);
    expect(linear.calls.map((c) => c.authorization)).toEqual(['lin_api_key', 'Bearer lin_oauth_token']);
  });

  it("a refused key is LinearCredentialsRefused with Linear's reason, never with the key", async () => {
    linear.revoked = true;
    const refused = viewer(api, 'lin_api_key');
    await expect(refused).rejects.toBeInstanceOf(LinearCredentialsRefused);
    await expect(refused).rejects.toMatchObject({
      code: 'external_authentication_required',
      linearReason: 'You need to authenticate to access this operation.',
    });
    await expect(refused).rejects.not.toThrow(/lin_api_key/);
  });

  it('an outage is resource_unavailable (retried by the reporter), not a refused key', async () => {
    linear.unavailable = 1;
    await expect(commentCreate(api, 'lin_api_key', 'issue-1', 'hi')).rejects.toMatchObject({
      code: 'resource_unavailable',
    });
    await commentCreate(api, 'lin_api_key', 'issue-1', 'hi');
    expect(linear.comments.get('issue-1')).toEqual(['hi']);
  });

  it('refuses a Linear API on a loopback address that is not allow-listed', async () => {
    await expect(viewer({ ...api, policy: new EgressPolicy([]) }, 'lin_api_key')).rejects.toThrow(
      /EGRESS_ALLOWED_ADDRESSES/,
    );
  });
});
