import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  caCertFile,
  generateInstallationKeys,
  initPki,
  serviceTlsEnv,
  type InstallationKeys,
  type ServiceName,
} from '@conveyor/pki';

/** A throwaway installation's trust material: its own CA and service certificates, and fresh keys. */
export interface TestTrust {
  pkiDir: string;
  /** The installation CA certificate (what a self-hosted worker is given to trust the worker endpoint). */
  caFile: string;
  keys: InstallationKeys;
  /** A service's `GRPC_TLS_*` variables, plus the keys for the orchestrator (the only service holding them). */
  serviceEnv(service: ServiceName): ReturnType<typeof serviceTlsEnv> & Partial<InstallationKeys>;
  remove(): Promise<void>;
}

export async function createTestTrust(): Promise<TestTrust> {
  const pkiDir = mkdtempSync(path.join(os.tmpdir(), 'conveyor-test-pki-'));
  await initPki(pkiDir);
  return trustOf(pkiDir, generateInstallationKeys());
}

/** An installation's existing trust material: its PKI directory and its keys (e.g. restored from a backup). */
export function trustOf(pkiDir: string, keys: InstallationKeys): TestTrust {
  return {
    pkiDir,
    caFile: caCertFile(pkiDir),
    keys,
    serviceEnv: (service) => ({
      ...serviceTlsEnv(pkiDir, service),
      ...(service === 'orchestrator' ? keys : {}),
    }),
    remove: () => rm(pkiDir, { recursive: true, force: true }),
  };
}
