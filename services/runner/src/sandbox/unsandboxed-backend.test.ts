import os from 'node:os';
import { createLogger } from '@conveyor/logger';
import { SandboxUnavailable } from './run-sandbox';
import { NONE_ACKNOWLEDGEMENT, sandboxEnv } from './sandbox-config';
import { UnsandboxedBackend } from './unsandboxed-backend';

const logger = createLogger({ service: 'test', level: 'silent' });

describe('RUN_SANDBOX=none', () => {
  it('refuses to start without the explicit acknowledgement, naming the setting', async () => {
    const check = new UnsandboxedBackend(logger, os.tmpdir(), false).check();
    await expect(check).rejects.toBeInstanceOf(SandboxUnavailable);
    await expect(check).rejects.toThrow(`RUN_SANDBOX_NONE_ACKNOWLEDGED=${NONE_ACKNOWLEDGEMENT}`);
  });

  it('starts, loudly, when acknowledged', async () => {
    await expect(new UnsandboxedBackend(logger, os.tmpdir(), true).check()).resolves.toBeUndefined();
  });

  it('accepts only the one acknowledgement value, so a stray `true` is a configuration error', () => {
    const setting = sandboxEnv.RUN_SANDBOX_NONE_ACKNOWLEDGED;
    expect(setting.parse(NONE_ACKNOWLEDGEMENT)).toBe(NONE_ACKNOWLEDGEMENT);
    expect(setting.parse(undefined)).toBe('');
    expect(setting.safeParse('true').success).toBe(false);
  });
});
