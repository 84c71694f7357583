import * as grpc from '@grpc/grpc-js';
import type { Logger } from '@conveyor/logger';
import {
  loadOrchestratorProto,
  ORCHESTRATOR_SERVICES,
  type OrchestratorProto,
  readTlsMaterial,
  type GrpcTlsSettings,
} from '@conveyor/proto';
import { guardService, type PeerAuthenticator } from './rpc-guard';
import type { OrchestratorHandlers } from './orchestrator-handler-set';

// Every service the clients know is served here, under the same names.
const SERVICE_NAMES = ORCHESTRATOR_SERVICES satisfies Record<
  keyof OrchestratorHandlers,
  keyof OrchestratorProto
>;

export interface GrpcListener {
  host: string;
  port: number;
  credentials: grpc.ServerCredentials;
  /** How the peer of each call is established; every RPC then passes RPC_PERMISSIONS (rpc-guard.ts). */
  authenticate: PeerAuthenticator;
  logger: Logger;
}

/**
 * The orchestrator's certificate on a listener. Core listener: mutual TLS, only client certificates issued by the
 * installation CA get past the handshake. Worker endpoint: server TLS only (workers authenticate with tokens).
 */
export function serverTlsCredentials(
  settings: GrpcTlsSettings,
  clients: 'mutual-tls' | 'server-tls-only',
): grpc.ServerCredentials {
  const { ca, cert, key } = readTlsMaterial(settings);
  const mutual = clients === 'mutual-tls';
  return grpc.ServerCredentials.createSsl(
    mutual ? ca : null,
    [{ cert_chain: cert, private_key: key }],
    mutual,
  );
}

/** Serves the given services (all of them on the core listener, a few on the worker endpoint), each behind the guard. */
export async function startGrpcServer(
  handlers: { [K in keyof OrchestratorHandlers]?: Partial<OrchestratorHandlers[K]> },
  listener: GrpcListener,
): Promise<{ server: grpc.Server; port: number }> {
  const proto = loadOrchestratorProto();
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 8 * 1024 * 1024 });
  for (const [key, name] of Object.entries(SERVICE_NAMES) as Array<
    [keyof OrchestratorHandlers, keyof OrchestratorProto]
  >) {
    const implementation = handlers[key];
    if (!implementation) continue;
    const definition = (proto[name] as unknown as grpc.ServiceClientConstructor).service;
    server.addService(
      definition,
      guardService(
        key,
        definition,
        implementation as unknown as grpc.UntypedServiceImplementation,
        listener.authenticate,
        listener.logger,
      ),
    );
  }
  const boundPort = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${listener.host}:${listener.port}`, listener.credentials, (err, p) =>
      err ? reject(err) : resolve(p),
    );
  });
  return { server, port: boundPort };
}

/** Lets in-flight calls finish, but never longer than the deadline. */
export function stopGrpcServer(server: grpc.Server, deadlineMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, deadlineMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
