import { apiCall, type Json, type RunningPlatform } from '@conveyor/testing';

/** A token-mode webhook of a new factory of the seeded team: where to post and the bearer secret. */
export async function createWebhook(
  platform: RunningPlatform,
  name: string,
): Promise<{ uid: string; url: string; secret: string; factoryId: string }> {
  const factory = await apiCall(platform, 'POST', '/factories', { name: `${name}-${Date.now()}` });
  if (factory.status !== 201) throw new Error(`factory: ${factory.status} ${JSON.stringify(factory.body)}`);
  const factoryId = factory.body.factory_id as string;
  const hook = await apiCall(platform, 'POST', `/factories/${factoryId}/webhooks`, { name });
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);
  return {
    uid: hook.body.webhook_uid as string,
    url: hook.body.ingress_url as string,
    secret: hook.body.secret as string,
    factoryId,
  };
}

export async function post(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(url, { method: 'POST', body, headers });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json, headers: res.headers };
}
