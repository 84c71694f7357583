import type { Logger } from '@conveyor/logger';
import { ModelProxy } from './model-proxy';
import type { ModelProxySettings } from './model-proxy-config';

/** The model proxy a runner process starts once: every run of a CLI harness reaches its model through it. */
export interface RunningModelProxy {
  proxy: ModelProxy;
  /** Its address on the platform's side: the target of each run's `model-proxy` sandbox endpoint. */
  target: { host: string; port: number };
}

export async function startModelProxy(
  config: ModelProxySettings,
  logger: Logger,
): Promise<RunningModelProxy> {
  const proxy = new ModelProxy(
    {
      anthropic: config.ANTHROPIC_BASE_URL,
      openai: config.OPENAI_BASE_URL,
      gemini: config.GOOGLE_GEMINI_BASE_URL,
    },
    logger.child({ component: 'model-proxy' }),
  );
  const target = await proxy.listen(config.MODEL_PROXY_HOST, config.MODEL_PROXY_PORT);
  logger.info({ modelProxy: `${target.host}:${target.port}` }, 'model proxy listening');
  return { proxy, target };
}
