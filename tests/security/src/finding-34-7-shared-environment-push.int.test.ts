import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  apiCall,
  createMember,
  createTeam,
  seedRemote,
  startGitHttpServer,
  startPlatform,
  type GitHttpServer,
  type Json,
  type RunningPlatform,
} from '@conveyor/testing';

jest.setTimeout(180_000);

/**
 * Issue 34 item 7: team A shares an environment whose repository names `push_secret_name: PUSH` with a guest of team
 * B, and both teams have a secret called PUSH. The repository's URL is A's choice (here a git server that records
 * the credential of every request). A guest's run must send neither B's PUSH to A's URL nor push B's work with A's.
 */
describe('issue 34.7: a guest run of a shared environment pushes with nobody’s secret', () => {
  let platform: RunningPlatform;
  let root: string;
  let http: GitHttpServer;
  let environmentId: string;
  let guestKey: string;
  const ownerSecret = `owner:${randomUUID()}`;
  const guestSecret = `guest:${randomUUID()}`;

  const runIn = async (key: string): Promise<Json> => {
    const created = await apiCall(
      platform,
      'POST',
      '/agent/runs',
      { prompt: '@demo message done', config: { environment_id: environmentId } },
      key,
    );
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    for (const deadline = Date.now() + 90_000; Date.now() < deadline;) {
      const run = (await apiCall(platform, 'GET', `/agent/runs/${runId}`, undefined, key)).body;
      if (['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state as string)) return run;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`run ${runId} did not end\n${platform.logs().slice(-3000)}`);
  };
  const credentialsSent = () => new Set(http.requests.map((r) => r.credential).filter((c) => c !== ''));

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'shared-push-'));
    seedRemote(root);
    http = await startGitHttpServer(root, ownerSecret);
    platform = await startPlatform({
      env: {
        // The remote is on loopback, which a real sandbox cannot reach by design; the push under test is the
        // orchestrator's either way.
        RUN_SANDBOX: 'none',
        RUN_SANDBOX_NONE_ACKNOWLEDGED: 'runs-are-not-isolated',
        GIT_ALLOWED_SCHEMES: 'https,http',
        EGRESS_ALLOWED_ADDRESSES: new URL(http.url).host,
      },
    });
    // Team A (the dev team): its secret and its environment, shared with a user of team B.
    expect((await apiCall(platform, 'PUT', '/secrets/PUSH', { value: ownerSecret })).status).toBe(200);
    const environment = await apiCall(platform, 'POST', '/agent/environments', {
      name: 'shared with a guest',
      repositories: [{ url: `${http.url}/origin.git`, push_secret_name: 'PUSH' }],
      // Stands in for the agent's work, so there is something to push.
      setup_commands: [
        `cd origin && printf 'work\\n' > hello.txt && git -c user.name=Agent -c user.email=agent@example.com commit --quiet -am work`,
      ],
    });
    expect(environment.status).toBe(201);
    environmentId = environment.body.uid as string;
    const guestEmail = `guest-${randomUUID()}@team-b.test`;
    guestKey = (
      await createMember(platform, { teamId: await createTeam(platform), role: 'ADMIN', email: guestEmail })
    ).key;
    expect((await apiCall(platform, 'PUT', '/secrets/PUSH', { value: guestSecret }, guestKey)).status).toBe(
      200,
    );
    const invited = await apiCall(platform, 'POST', `/agent/environments/${environmentId}/guests`, {
      email: guestEmail,
    });
    expect(invited.status).toBe(202);
    const accepted = await apiCall(
      platform,
      'POST',
      `/agent/environment-invitations/${invited.body.invitation_id as string}/accept`,
      undefined,
      guestKey,
    );
    expect(accepted.status).toBe(200);
  });

  afterAll(async () => {
    await platform?.stop();
    await http?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("the guest's run clones the repository, pushes nothing, and no secret reaches the owner's URL", async () => {
    const run = await runIn(guestKey);
    expect(run.state).toBe('SUCCEEDED');
    expect(http.requests.some((r) => r.service === 'git-upload-pack')).toBe(true);
    expect(http.requests.filter((r) => r.service === 'git-receive-pack')).toEqual([]);
    expect(credentialsSent()).toEqual(new Set());
    expect(JSON.stringify(run.artifacts ?? [])).not.toContain('git_branch');
  });

  it("the owner team's own run in it still pushes, with the owner's secret only", async () => {
    const run = await runIn(platform.apiKey);
    expect(run.state).toBe('SUCCEEDED');
    expect(http.requests.some((r) => r.service === 'git-receive-pack')).toBe(true);
    expect(credentialsSent()).toEqual(new Set([ownerSecret]));
  });
});
