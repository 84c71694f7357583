import { randomUUID } from 'node:crypto';
import type { RunningPlatform } from './platform';
import { apiCall, type Json } from './run-waits';

export function webhookApi(platform: RunningPlatform) {
  const api = (method: string, path: string, body?: unknown, key?: string) =>
    apiCall(platform, method, path, body, key);
  return {
    api,
    async factory(name = `factory-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`): Promise<string> {
      const res = await api('POST', '/factories', { name });
      if (res.status !== 201) throw new Error(`factory: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.factory_id as string;
    },
    async webhook(
      factoryId: string,
      body: Json,
    ): Promise<Json & { webhook_uid: string; ingress_url: string; secret?: string }> {
      const res = await api('POST', `/factories/${factoryId}/webhooks`, body);
      if (res.status !== 201) throw new Error(`webhook: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as Json & { webhook_uid: string; ingress_url: string; secret?: string };
    },
    async deliveries(factoryId: string, uid: string): Promise<Json[]> {
      const res = await api('GET', `/factories/${factoryId}/webhooks/${uid}/deliveries?limit=200`);
      if (res.status !== 200) throw new Error(`deliveries: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.deliveries as Json[];
    },
    /** Polls the delivery log until `predicate` holds (the log is written by the orchestrator's consumer). */
    async waitForDeliveries(
      factoryId: string,
      uid: string,
      predicate: (entries: Json[]) => boolean,
      what: string,
      timeoutMs = 20_000,
    ): Promise<Json[]> {
      const deadline = Date.now() + timeoutMs;
      let entries: Json[] = [];
      while (Date.now() < deadline) {
        entries = await this.deliveries(factoryId, uid);
        if (predicate(entries)) return entries;
        await new Promise((r) => setTimeout(r, 150));
      }
      throw new Error(
        `timed out waiting for ${what}; log: ${JSON.stringify(entries.map((e) => [e.delivery_id, e.label, e.processed_at]))}\n${platform.logs().slice(-3000)}`,
      );
    },
  };
}

/**
 * An integration's registration as a suite repeats it: POST `path` with a unique name (`<prefix>-<8 hex>`), the
 * fields every registration of the suite shares (read at each call: the suite's beforeAll sets them) and the test's
 * own.
 */
export function integrationRegistration(platform: () => RunningPlatform, path: string, shared: () => Json) {
  return (prefix: string, extra: Json = {}) =>
    apiCall(platform(), 'POST', path, {
      name: `${prefix}-${randomUUID().slice(0, 8)}`,
      ...shared(),
      ...extra,
    });
}
