import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';

/** The `GRPC_TLS_*` settings every core service has (packages/config's grpcTlsEnv). */
export interface GrpcTlsSettings {
  GRPC_TLS_CA_FILE: string;
  GRPC_TLS_CERT_FILE: string;
  GRPC_TLS_KEY_FILE: string;
}

export interface TlsMaterial {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** Reads a PEM file named by a setting; a missing file fails the start naming the setting. */
export function readPemSetting(setting: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(
      `${setting}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)}); run \`conveyor pki init\``,
    );
  }
}

export function readTlsMaterial(settings: GrpcTlsSettings): TlsMaterial {
  return {
    ca: readPemSetting('GRPC_TLS_CA_FILE', settings.GRPC_TLS_CA_FILE),
    cert: readPemSetting('GRPC_TLS_CERT_FILE', settings.GRPC_TLS_CERT_FILE),
    key: readPemSetting('GRPC_TLS_KEY_FILE', settings.GRPC_TLS_KEY_FILE),
  };
}

/** A core service's client side: trusts only the installation CA and presents the service's own certificate. */
export function mutualTlsCredentials(settings: GrpcTlsSettings): grpc.ChannelCredentials {
  const { ca, cert, key } = readTlsMaterial(settings);
  return grpc.credentials.createSsl(ca, key, cert);
}

/**
 * A self-hosted worker's side of the worker endpoint: server-authenticated TLS (the installation CA, or the system's
 * roots when the endpoint has a public certificate) and the team's worker token on every call.
 */
export function workerCredentials(caFile: string | undefined, workerToken: string): grpc.ChannelCredentials {
  const ca = caFile ? readPemSetting('WORKER_ENDPOINT_CA_FILE', caFile) : null;
  const token = grpc.credentials.createFromMetadataGenerator((_params, callback) => {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${workerToken}`);
    callback(null, metadata);
  });
  return grpc.credentials.combineChannelCredentials(grpc.credentials.createSsl(ca), token);
}
