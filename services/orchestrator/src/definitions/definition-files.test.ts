import { parseDefinitionFiles } from './definition-files';

const trigger = 'trigger:\n  provider: webhook\n  event: received\n  filter:\n    webhook_ids: [wh_abc]\n';

describe('parseDefinitionFiles', () => {
  it('parses webhook and automation files, the file name being the identity', () => {
    const parsed = parseDefinitionFiles([
      {
        path: 'factory/webhooks/github.yaml',
        content:
          'authMode: signature\nsignatureScheme: github\nsecretName: GH_SECRET\ndeliveryIdHeader: X-Request-Id\n',
      },
      { path: 'webhooks/plain.yml', content: 'secretName: PLAIN\n' },
      {
        path: 'automations/triage.yaml',
        content: `prompt: Triage it\nagentConfig:\n  model_id: m1\n${trigger}    payload:\n      action: [opened]\n`,
      },
    ]);
    expect(parsed.errors).toEqual([]);
    expect(parsed.webhooks).toEqual([
      {
        file: 'factory/webhooks/github.yaml',
        name: 'github',
        authMode: 'signature',
        signatureScheme: 'github',
        secretName: 'GH_SECRET',
        deliveryIdHeader: 'X-Request-Id',
        enabled: true,
      },
      { file: 'webhooks/plain.yml', name: 'plain', authMode: 'token', secretName: 'PLAIN', enabled: true },
    ]);
    expect(parsed.automations).toEqual([
      {
        file: 'automations/triage.yaml',
        name: 'triage',
        prompt: 'Triage it',
        agentConfig: { model_id: 'm1' },
        enabled: true,
        trigger: {
          provider: 'webhook',
          event: 'received',
          filter: { webhook_ids: ['wh_abc'], payload: { action: ['opened'] } },
        },
      },
    ]);
  });

  it('refuses a name key that differs from the file name (renaming is unsupported)', () => {
    const parsed = parseDefinitionFiles([
      { path: 'webhooks/new-name.yaml', content: 'name: old-name\nsecretName: S\n' },
    ]);
    expect(parsed.errors).toEqual([
      {
        file: 'webhooks/new-name.yaml',
        message: expect.stringMatching(/differs from the file name "new-name": renaming .* unsupported/),
      },
    ]);
  });

  it('collects every problem of every file', () => {
    const parsed = parseDefinitionFiles([
      { path: 'webhooks/a.yaml', content: 'authMode: bearer\n' },
      { path: 'webhooks/b.yaml', content: 'authMode: signature\nsecretName: S\n' },
      { path: 'webhooks/c.yaml', content: 'secretName: S\nsignatureScheme: github\n' },
      { path: 'webhooks/d.yaml', content: 'secretName: [unclosed\n' },
      { path: 'webhooks/e.yaml', content: '- a list\n' },
      { path: 'webhooks/f.yaml', content: 'secretName: S\ncolour: blue\n' },
      { path: 'automations/g.yaml', content: 'prompt: p\n' },
      {
        path: 'automations/h.yaml',
        content:
          'prompt: p\ntrigger:\n  provider: webhook\n  event: received\n  filter:\n    webhook_ids: [github]\n',
      },
      { path: 'README.md', content: '' },
      { path: 'webhooks/a.yml', content: 'secretName: S\n' },
    ]);
    const byFile = (file: string) => parsed.errors.filter((e) => e.file === file).map((e) => e.message);
    expect(byFile('webhooks/a.yaml')).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^authMode must be one of/),
        expect.stringMatching(/^secretName is required/),
      ]),
    );
    expect(byFile('webhooks/b.yaml')).toEqual([expect.stringMatching(/signatureScheme must be one of/)]);
    expect(byFile('webhooks/c.yaml')).toEqual([expect.stringMatching(/applies to authMode: signature only/)]);
    expect(byFile('webhooks/d.yaml')).toEqual([expect.stringMatching(/invalid YAML/)]);
    expect(byFile('webhooks/e.yaml')).toEqual([expect.stringMatching(/mapping/)]);
    expect(byFile('webhooks/f.yaml')).toEqual([expect.stringMatching(/unknown key\(s\) colour/)]);
    expect(byFile('automations/g.yaml')).toEqual([expect.stringMatching(/trigger is required/)]);
    expect(byFile('automations/h.yaml')).toEqual([expect.stringMatching(/never a file name/)]);
    expect(byFile('README.md')).toEqual([expect.stringMatching(/expected webhooks/)]);
    expect(byFile('webhooks/a.yml')).toEqual([expect.stringMatching(/second time/)]);
    expect(parsed.webhooks).toEqual([]);
    expect(parsed.automations).toEqual([]);
  });
});
