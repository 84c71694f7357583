import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli, startPlatform, type RunningPlatform } from './platform';
import type { Json } from './run-waits';
import { createMember, otherTeamAdmin } from '@conveyor/testing';
import { webhookApi } from './webhook-helpers';

describe('webhooks management API end to end (gateway → orchestrator → PostgreSQL/Redis)', () => {
  let platform: RunningPlatform;
  let w: ReturnType<typeof webhookApi>;
  let memberKey: string;
  let outsiderKey: string;

  beforeAll(async () => {
    platform = await startPlatform({ withRunner: false });
    w = webhookApi(platform);
    [memberKey, outsiderKey] = await Promise.all([
      createMember(platform).then((m) => m.key),
      otherTeamAdmin(platform).then((a) => a.key),
    ]);
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('factories: admins create, members read, writes by members are a clear 403, other teams see 404', async () => {
    const created = await w.api('POST', '/factories', { name: 'Production' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      factory_id: expect.stringMatching(/^fac_/),
      name: 'Production',
      webhook_count: 0,
      automation_count: 0,
    });
    const id = created.body.factory_id as string;
    expect((await w.api('GET', '/factories', undefined, memberKey)).body.factories).toEqual(
      expect.arrayContaining([expect.objectContaining({ factory_id: id })]),
    );
    const denied = await w.api('POST', '/factories', { name: 'Nope' }, memberKey);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      status: 403,
      type: expect.stringMatching(/not_authorized$/),
      detail: expect.stringMatching(/permission to manage the factory/),
    });
    const hidden = await w.api('GET', `/factories/${id}`, undefined, outsiderKey);
    const missing = await w.api('GET', '/factories/fac_doesnotexist', undefined, outsiderKey);
    expect(hidden.status).toBe(404);
    expect(hidden.body.detail).toBe(missing.body.detail);
    expect((await w.api('POST', '/factories', { name: '' })).status).toBe(400);
  });

  it('webhooks: create returns the secret and URL once; get and list never show a secret again', async () => {
    const factoryId = await w.factory();
    const token = await w.webhook(factoryId, { name: 'ci-events' });
    expect(token).toMatchObject({
      webhook_uid: expect.stringMatching(/^wh_/),
      name: 'ci-events',
      auth_mode: 'token',
      signature_scheme: null,
      secret_name: 'WEBHOOK_CI_EVENTS_SECRET',
      delivery_id_header: null,
      enabled: true,
      secret_status: 'active',
      managed_by: 'api',
      secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      ingress_url: `${platform.ingressUrl}/webhooks/w/${token.webhook_uid}`,
      url: `${platform.ingressUrl}/webhooks/w/${token.webhook_uid}`,
    });
    const url = await w.webhook(factoryId, {
      name: 'by-url',
      auth_mode: 'url_token',
      delivery_id_header: 'X-Request-Id',
    });
    expect(url.ingress_url).toBe(`${platform.ingressUrl}/webhooks/w/${url.webhook_uid}/${url.secret}`);
    expect(url.url).toBe(`${platform.ingressUrl}/webhooks/w/${url.webhook_uid}/{token}`);
    expect(url.delivery_id_header).toBe('x-request-id');

    const got = await w.api(
      'GET',
      `/factories/${factoryId}/webhooks/${url.webhook_uid}`,
      undefined,
      memberKey,
    );
    expect(got.status).toBe(200);
    expect(got.body.url).toBe(`${platform.ingressUrl}/webhooks/w/${url.webhook_uid}/{token}`);
    expect(got.body).not.toHaveProperty('secret');
    const listed = await w.api('GET', `/factories/${factoryId}/webhooks`);
    const text = JSON.stringify(listed.body);
    for (const secret of [token.secret!, url.secret!]) expect(text).not.toContain(secret);
    expect((listed.body.webhooks as Json[]).map((x) => x.name)).toEqual(['by-url', 'ci-events']);

    expect(
      (await w.api('POST', `/factories/${factoryId}/webhooks`, { name: 'member' }, memberKey)).status,
    ).toBe(403);
    expect(
      (await w.api('GET', `/factories/${factoryId}/webhooks/${token.webhook_uid}`, undefined, outsiderKey))
        .status,
    ).toBe(404);
    const bad = await w.api('POST', `/factories/${factoryId}/webhooks`, {
      name: 'x',
      auth_mode: 'signature',
      signature_scheme: 'carrier-pigeon',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(
      /signature_scheme must be one of standard-webhooks, stripe, github, gitlab, slack, linear, shopify/,
    );
  });

  it('signature webhooks: generated Standard Webhooks secret, or a second step for providers that issue theirs', async () => {
    const factoryId = await w.factory();
    const sw = await w.webhook(factoryId, {
      name: 'svix',
      auth_mode: 'signature',
      signature_scheme: 'standard-webhooks',
    });
    expect(sw.secret).toMatch(/^whsec_/);
    const stripe = await w.webhook(factoryId, {
      name: 'stripe',
      auth_mode: 'signature',
      signature_scheme: 'stripe',
    });
    expect(stripe).not.toHaveProperty('secret');
    expect(stripe.secret_status).toBe('awaiting_provider_secret');
    const second = await w.api(
      'POST',
      `/factories/${factoryId}/webhooks/${stripe.webhook_uid}/rotate-secret`,
      { provider_secret: 'whsec_issued_by_stripe' },
    );
    expect(second.status).toBe(200);
    expect(second.body.secret_status).toBe('active');
    expect(second.body).not.toHaveProperty('secret');
  });

  it('enable/disable, rotate and delete; at most 20 webhooks per factory', async () => {
    const factoryId = await w.factory();
    const hook = await w.webhook(factoryId, { name: 'toggle' });
    const base = `/factories/${factoryId}/webhooks/${hook.webhook_uid}`;
    expect((await w.api('POST', `${base}/disable`)).body.enabled).toBe(false);
    expect((await w.api('POST', `${base}/enable`)).body.enabled).toBe(true);
    expect((await w.api('PATCH', base, { enabled: false })).body.enabled).toBe(false);
    expect((await w.api('POST', `${base}/disable`, undefined, memberKey)).status).toBe(403);
    const rotated = await w.api('POST', `${base}/rotate-secret`);
    expect(rotated.body.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated.body.secret).not.toBe(hook.secret);
    expect((await w.api('DELETE', base)).status).toBe(204);
    expect((await w.api('GET', base)).status).toBe(404);

    for (let i = 0; i < 20; i++) await w.webhook(factoryId, { name: `hook-${i}` });
    const over = await w.api('POST', `/factories/${factoryId}/webhooks`, { name: 'hook-20' });
    expect(over.status).toBe(409);
    expect(over.body.detail).toMatch(/at most 20 webhooks/);
  });

  it('team secrets: create, set value, never read back; members cannot write', async () => {
    const created = await w.api('POST', '/secrets', { name: 'LINEAR_SIGNING', value: 'lin_wh_secret_value' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      name: 'LINEAR_SIGNING',
      created_at: expect.any(String),
      updated_at: expect.any(String),
      used_by_webhooks: [],
    });
    expect((await w.api('PUT', '/secrets/LINEAR_SIGNING', { value: 'lin_wh_secret_value_2' })).status).toBe(
      200,
    );
    const all = JSON.stringify((await w.api('GET', '/secrets', undefined, memberKey)).body);
    expect(all).toContain('LINEAR_SIGNING');
    expect(all).not.toContain('lin_wh_secret_value');
    expect((await w.api('GET', '/secrets/LINEAR_SIGNING')).body).not.toHaveProperty('value');
    expect((await w.api('PUT', '/secrets/LINEAR_SIGNING', { value: 'x' }, memberKey)).status).toBe(403);
    expect((await w.api('GET', '/secrets/LINEAR_SIGNING', undefined, outsiderKey)).status).toBe(404);
    expect((await w.api('POST', '/secrets', { name: 'LINEAR_SIGNING', value: 'again' })).status).toBe(409);
  });

  it('automations: prompt, agent config, enabled flag and a Webhook trigger by UID with a payload filter', async () => {
    const factoryId = await w.factory();
    const hook = await w.webhook(factoryId, { name: 'issues' });
    const trigger = {
      provider: 'webhook',
      event: 'received',
      filter: {
        webhook_ids: [hook.webhook_uid],
        payload: { action: ['opened'], issue: { labels: { exists: true } } },
      },
    };
    const created = await w.api('POST', `/factories/${factoryId}/automations`, {
      name: 'triage',
      prompt: 'Triage the issue',
      agent_config: { model_id: 'claude-x' },
      trigger,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      automation_id: expect.stringMatching(/^auto_/),
      name: 'triage',
      enabled: true,
      agent_config: { model_id: 'claude-x' },
      trigger,
      managed_by: 'api',
    });
    const id = created.body.automation_id as string;
    expect((await w.api('POST', `/factories/${factoryId}/automations/${id}/disable`)).body.enabled).toBe(
      false,
    );
    expect(
      (
        await w.api('PATCH', `/factories/${factoryId}/automations/${id}`, {
          prompt: 'Triage it well',
          enabled: true,
        })
      ).body,
    ).toMatchObject({ prompt: 'Triage it well', enabled: true });
    const invalid = await w.api('POST', `/factories/${factoryId}/automations`, {
      name: 'bad',
      prompt: 'p',
      trigger: { ...trigger, filter: { webhook_ids: [hook.webhook_uid], payload: { action: { eq: 'x' } } } },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.detail).toMatch(/trigger\.filter\.payload\.action/);
    const byName = await w.api('POST', `/factories/${factoryId}/automations`, {
      name: 'names',
      prompt: 'p',
      trigger: { ...trigger, filter: { webhook_ids: ['issues'] } },
    });
    expect(byName.status).toBe(400);
    expect(
      (
        await w.api(
          'POST',
          `/factories/${factoryId}/automations`,
          { name: 'm', prompt: 'p', trigger },
          memberKey,
        )
      ).status,
    ).toBe(403);
    expect(
      (await w.api('GET', `/factories/${factoryId}/automations`, undefined, memberKey)).body.automations,
    ).toHaveLength(1);
  });

  it('definitions as code through the API: UIDs assigned on first apply, renames and missing secrets refused', async () => {
    const factoryId = await w.factory();
    await w.api('PUT', '/secrets/GH_WEBHOOK', { value: 'gh-webhook-signing-secret' });
    const first = await w.api('POST', `/factories/${factoryId}/apply`, {
      files: [
        {
          path: 'webhooks/github.yaml',
          content: 'authMode: signature\nsignatureScheme: github\nsecretName: GH_WEBHOOK\n',
        },
      ],
    });
    expect(first.status).toBe(200);
    const [applied] = first.body.webhooks as Json[];
    expect(applied).toMatchObject({
      name: 'github',
      webhook_uid: expect.stringMatching(/^wh_/),
      action: 'created',
      url: `${platform.ingressUrl}/webhooks/w/${applied!.webhook_uid}`,
    });
    const uid = applied!.webhook_uid as string;
    const again = await w.api('POST', `/factories/${factoryId}/apply`, {
      webhooks: [
        {
          name: 'github',
          yaml: `uid: ${uid}\nauthMode: signature\nsignatureScheme: github\nsecretName: GH_WEBHOOK\n`,
        },
      ],
      automations: [
        {
          name: 'review',
          yaml: `prompt: Review the PR\ntrigger:\n  provider: webhook\n  event: received\n  filter:\n    webhook_ids: [${uid}]\n    payload:\n      action: [opened]\n`,
        },
      ],
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({
      webhooks: [{ name: 'github', webhook_uid: uid, action: 'unchanged', url: expect.any(String) }],
      automations: [{ name: 'review', automation_id: expect.stringMatching(/^auto_/), action: 'created' }],
      integrations: [],
    });
    const renamed = await w.api('POST', `/factories/${factoryId}/apply`, {
      webhooks: [{ name: 'gh', yaml: `uid: ${uid}\nsecretName: GH_WEBHOOK\n` }],
    });
    expect(renamed.status).toBe(400);
    expect(renamed.body.detail).toMatch(/renaming a webhook defined as code is unsupported/);
    expect(renamed.body.errors).toEqual([
      { file: 'webhooks/gh.yaml', message: expect.stringMatching(/belongs to webhook "github"/) },
    ]);
    const missing = await w.api('POST', `/factories/${factoryId}/apply`, {
      webhooks: [{ name: 'other', yaml: 'secretName: NOT_A_SECRET\n' }],
    });
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toMatch(/secretName "NOT_A_SECRET" does not name a team secret/);
    await w.api('PUT', '/secrets/NOT_URL_SAFE', { value: 'contains spaces and / slashes' });
    const unsafe = await w.api('POST', `/factories/${factoryId}/apply`, {
      webhooks: [{ name: 'link', yaml: 'authMode: url_token\nsecretName: NOT_URL_SAFE\n' }],
    });
    expect(unsafe.status).toBe(400);
    expect(unsafe.body.detail).toMatch(/not URL-safe/);
    expect(
      (
        await w.api(
          'POST',
          `/factories/${factoryId}/apply`,
          { webhooks: [{ name: 'x', yaml: 'secretName: GH_WEBHOOK\n' }] },
          memberKey,
        )
      ).status,
    ).toBe(403);
  });

  it('definitions as code through the CLI: conveyor apply <dir> --factory', async () => {
    const factoryId = await w.factory();
    await w.api('PUT', '/secrets/CLI_TOKEN', { value: 'cli-token-secret-value' });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'conveyor-defs-'));
    mkdirSync(path.join(dir, 'webhooks'));
    writeFileSync(
      path.join(dir, 'webhooks', 'deploys.yaml'),
      'authMode: token\nsecretName: CLI_TOKEN\ndeliveryIdHeader: X-Deploy-Id\n',
    );
    const output = JSON.parse(await runCli(['apply', dir, '--factory', factoryId], platform.env)) as {
      webhooks: Array<{ name: string; id: string; action: string }>;
    };
    expect(output.webhooks).toEqual([
      expect.objectContaining({ name: 'deploys', action: 'created', id: expect.stringMatching(/^wh_/) }),
    ]);
    const got = await w.api('GET', `/factories/${factoryId}/webhooks/${output.webhooks[0]!.id}`);
    expect(got.body).toMatchObject({
      name: 'deploys',
      managed_by: 'definition',
      secret_name: 'CLI_TOKEN',
      delivery_id_header: 'x-deploy-id',
    });
    writeFileSync(path.join(dir, 'webhooks', 'broken.yaml'), 'secretName: NOPE\n');
    await expect(runCli(['apply', dir, '--factory', factoryId], platform.env)).rejects.toThrow(
      /webhooks\/broken\.yaml: secretName "NOPE" does not name a team secret/,
    );
  });
});
