import * as grpc from '@grpc/grpc-js';
import { AppError, toGrpcError } from '@conveyor/errors';
import type { Logger } from '@conveyor/logger';
import { serviceOfCertificate } from '@conveyor/pki';
import type { OrchestratorHandlers } from './orchestrator-handler-set';
import { toAppError } from './database-errors';
import { allowedPeers, type PeerKind } from './rpc-permissions';

/** Who is calling, as the transport established it; `teamId` for workers, whose calls are scoped to their team. */
export interface Peer {
  kind: PeerKind;
  teamId?: string;
}

/** What every kind of server call offers (grpc-js does not export its ServerSurfaceCall type). */
export type ServerCall = Pick<
  grpc.ServerUnaryCall<unknown, unknown>,
  'metadata' | 'getAuthContext' | 'getPeer'
>;

/** How a listener learns the peer of a call: its client certificate, or a worker token. Undefined = unauthenticated. */
export type PeerAuthenticator = (call: ServerCall) => Promise<Peer | undefined>;

const peers = new WeakMap<ServerCall, Peer>();

/** The peer of a call that passed the guard (handlers that scope data by team read it). */
export function peerOf(call: ServerCall): Peer | undefined {
  return peers.get(call);
}

/** The core listener's peers: the service its CA-verified client certificate names (the CA check is TLS's own). */
export const certificatePeer: PeerAuthenticator = async (call) => {
  const kind = serviceOfCertificate(call.getAuthContext()?.sslPeerCertificate?.subjectaltname);
  return kind ? { kind } : undefined;
};

type AnyHandler = (call: ServerCall, callback?: (err: grpc.ServiceError) => void) => void;

function refuse(
  call: ServerCall,
  callback: ((err: grpc.ServiceError) => void) | undefined,
  error: AppError,
): void {
  const status = toGrpcError(error) as grpc.ServiceError;
  // Unary and client-streaming calls answer through their callback; streams the server writes to end with an error.
  if (callback) callback(status);
  else (call as unknown as NodeJS.EventEmitter).emit('error', status);
}

/**
 * Wraps every method of one service so that it runs only for the peers RPC_PERMISSIONS allows. Methods are taken
 * from the service definition (the protos), not from the implementation, so an RPC the table lacks is refused.
 */
export function guardService(
  service: keyof OrchestratorHandlers,
  definition: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
  authenticate: PeerAuthenticator,
  logger: Logger,
): grpc.UntypedServiceImplementation {
  const guarded: grpc.UntypedServiceImplementation = {};
  for (const method of Object.keys(definition)) {
    const handler = implementation[method] as AnyHandler | undefined;
    if (!handler) continue;
    const allowed = allowedPeers(service, method);
    if (allowed.length === 0)
      logger.warn(
        { rpc: `${service}.${method}` },
        'rpc missing from RPC_PERMISSIONS: refused to every caller',
      );
    const wrapped: AnyHandler = (call, callback) => {
      authenticate(call).then(
        (peer) => {
          if (!peer)
            return refuse(
              call,
              callback,
              new AppError(
                'authentication_required',
                'This endpoint needs a client certificate or worker token of this installation',
              ),
            );
          if (!allowed.includes(peer.kind)) {
            logger.warn({ peer: peer.kind, rpc: `${service}.${method}` }, 'rpc refused: peer not allowed');
            return refuse(
              call,
              callback,
              new AppError('not_authorized', `${peer.kind} may not call ${method}`),
            );
          }
          peers.set(call, peer);
          handler(call, callback);
        },
        (err: unknown) => {
          logger.error({ err, rpc: `${service}.${method}` }, 'peer authentication failed');
          // A database outage while checking a worker token is the retryable UNAVAILABLE, so the caller retries.
          refuse(call, callback, toAppError(err));
        },
      );
    };
    guarded[method] = wrapped as unknown as grpc.UntypedHandleCall;
  }
  return guarded;
}
