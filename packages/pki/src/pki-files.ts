import path from 'node:path';
import type { ServiceName } from './identities';

/** Where one service's TLS material lives in an installation's PKI directory. */
export interface TlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
}

export const caCertFile = (dir: string): string => path.join(dir, 'ca.pem');
export const caKeyFile = (dir: string): string => path.join(dir, 'ca-key.pem');

export function serviceTlsFiles(dir: string, service: ServiceName): TlsFiles {
  return {
    caFile: caCertFile(dir),
    certFile: path.join(dir, `${service}.pem`),
    keyFile: path.join(dir, `${service}-key.pem`),
  };
}

/** The three `GRPC_TLS_*` variables every service reads (packages/config's grpcTlsEnv). */
export function serviceTlsEnv(
  dir: string,
  service: ServiceName,
): Record<'GRPC_TLS_CA_FILE' | 'GRPC_TLS_CERT_FILE' | 'GRPC_TLS_KEY_FILE', string> {
  const files = serviceTlsFiles(dir, service);
  return {
    GRPC_TLS_CA_FILE: files.caFile,
    GRPC_TLS_CERT_FILE: files.certFile,
    GRPC_TLS_KEY_FILE: files.keyFile,
  };
}
