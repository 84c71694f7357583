import { Metadata, type ServiceError, type requestCallback } from '@grpc/grpc-js';
import type { OrchestratorClients } from './orchestrator-client';

export type ServiceClients = Omit<OrchestratorClients, 'close'>;
// The generated clients' last overload is `(request, callback)`, which is what conditional types infer from.
export type RequestOf<F> = F extends (request: infer R, callback: requestCallback<infer _O>) => unknown
  ? R
  : never;
export type ResponseOf<F> = F extends (request: infer _R, callback: requestCallback<infer O>) => unknown
  ? O
  : never;
// Only the PascalCase RPC names (the stubs also carry camelCase aliases and grpc.Client's own methods).
export type RpcNames<C> = {
  [K in keyof C]: K extends Capitalize<K & string> ? ([RequestOf<C[K]>] extends [never] ? never : K) : never;
}[keyof C];

/** A typed, promisified unary call with a deadline; rejects with the grpc ServiceError untouched. */
export function callRpc<S extends keyof ServiceClients, M extends RpcNames<ServiceClients[S]>>(
  clients: ServiceClients,
  service: S,
  method: M,
  request: RequestOf<ServiceClients[S][M]>,
  options: { deadlineMs?: number; metadata?: Metadata } = {},
): Promise<ResponseOf<ServiceClients[S][M]>> {
  const client = clients[service];
  const fn = client[method] as unknown as (
    req: unknown,
    md: Metadata,
    opts: { deadline: number },
    cb: requestCallback<unknown>,
  ) => void;
  return new Promise((resolve, reject) => {
    fn.call(
      client,
      request,
      options.metadata ?? new Metadata(),
      { deadline: Date.now() + (options.deadlineMs ?? 10_000) },
      (err: ServiceError | null, res?: unknown) => {
        if (err) reject(err);
        else resolve(res as ResponseOf<ServiceClients[S][M]>);
      },
    );
  });
}
