import type { Logger } from '@conveyor/logger';
import type { SandboxBackend } from './run-sandbox';
import { UnsandboxedBackend } from './unsandboxed-backend';

export const SANDBOX_BACKENDS = ['none'] as const;
export type SandboxBackendName = (typeof SANDBOX_BACKENDS)[number];

/** Builds the configured backend and verifies it can isolate runs here before the runner takes any job. */
export async function createSandboxBackend(name: SandboxBackendName, logger: Logger): Promise<SandboxBackend> {
  const log = logger.child({ component: 'sandbox' });
  let backend: SandboxBackend;
  switch (name) {
    case 'none':
      backend = new UnsandboxedBackend(log);
      break;
  }
  await backend.check();
  return backend;
}
