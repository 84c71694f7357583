import { matchTriggerPayload, parseWebhookTrigger } from './automation-trigger';

describe('parseWebhookTrigger', () => {
  const base = { provider: 'webhook', event: 'received', filter: { webhook_ids: ['wh_abc'] } };

  it('accepts a trigger with and without a payload filter, de-duplicating UIDs', () => {
    expect(parseWebhookTrigger(base)).toEqual({ ok: true, trigger: base, payloadFilter: undefined });
    const withPayload = {
      ...base,
      filter: { webhook_ids: ['wh_abc', 'wh_abc'], payload: { action: ['opened'] } },
    };
    const parsed = parseWebhookTrigger(withPayload);
    expect(parsed).toMatchObject({
      ok: true,
      trigger: { ...base, filter: { webhook_ids: ['wh_abc'], payload: { action: ['opened'] } } },
    });
  });

  it('hands the compiled payload filter on, so a delivery is matched without parsing it again', () => {
    const parsed = parseWebhookTrigger({
      ...base,
      filter: { webhook_ids: ['wh_abc'], payload: { action: ['opened'] } },
    });
    if (!parsed.ok) throw new Error('expected a valid trigger');
    expect(matchTriggerPayload(parsed.payloadFilter, { action: 'opened' })).toEqual({
      matched: true,
      mismatches: [],
    });
    expect(matchTriggerPayload(parsed.payloadFilter, { action: 'closed' }).matched).toBe(false);
    expect(matchTriggerPayload(undefined, { anything: 1 })).toEqual({ matched: true, mismatches: [] });
  });

  it('names every problem with its path', () => {
    const result = parseWebhookTrigger({ provider: 'cron', event: 'received', filter: { webhook_ids: [] } });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => e.path)).toEqual(['trigger.provider', 'trigger.filter.webhook_ids']);
  });

  it('refuses file names where UIDs belong, unknown keys and invalid payload filters', () => {
    const names = parseWebhookTrigger({ ...base, filter: { webhook_ids: ['github.yaml'] } });
    expect(!names.ok && names.errors[0]?.message).toMatch(/never a file name/);
    const extra = parseWebhookTrigger({ ...base, when: 'now' });
    expect(!extra.ok && extra.errors[0]?.message).toMatch(/unknown key/);
    const badFilter = parseWebhookTrigger({
      ...base,
      filter: { webhook_ids: ['wh_abc'], payload: { action: { eq: 'x' } } },
    });
    expect(badFilter.ok).toBe(false);
    expect(!badFilter.ok && badFilter.errors[0]?.path).toBe('trigger.filter.payload.action.eq');
  });
});
