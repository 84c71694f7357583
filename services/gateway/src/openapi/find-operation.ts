import { OPERATIONS, type Operation } from './operations';

/** `/api/v1` is an alias of `/v1` (both mount the same router); the document names `/v1` only. */
export const canonicalPath = (path: string): string => path.replace(/^\/api\/v1(?=\/|$)/, '/v1');

const matchers = OPERATIONS.map((op) => ({
  op,
  pattern: new RegExp(
    `^${op.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}/?$`,
  ),
}));

/** The operation a request path (without query) and method belong to, if any. */
export function findOperation(method: string, path: string): Operation | undefined {
  const canonical = canonicalPath(path);
  const lower = method.toLowerCase();
  // A literal segment beats a parameter (`/agent/runs` vs `/agent/runs/:runId` never collide, but
  // `/agent/run-by-external-reference` and future siblings might): prefer the operation with fewer parameters.
  return matchers
    .filter((m) => m.op.method === lower && m.pattern.test(canonical))
    .sort((a, b) => (a.op.path.match(/:/g)?.length ?? 0) - (b.op.path.match(/:/g)?.length ?? 0))[0]?.op;
}
