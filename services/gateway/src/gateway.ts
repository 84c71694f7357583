import type { Server } from 'node:http';
import { Redis } from 'ioredis';
import type { Logger } from '@conveyor/logger';
import { closeAll, closeServer, listen, Readiness, type Service } from '@conveyor/runtime';
import { buildApp } from './app';
import type { GatewayConfig } from './config';
import { ConsoleSessions } from './console/console-sessions';
import { OrchestratorApi } from './orchestrator-api';

export class Gateway implements Service {
  readonly readiness = new Readiness();
  port = 0;
  private server: Server | undefined;
  private api: OrchestratorApi | undefined;
  private redis: Redis | undefined;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly config: GatewayConfig,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const api = new OrchestratorApi(this.config.ORCHESTRATOR_ADDR, this.config.GRPC_DEADLINE_MS);
    this.api = api;
    this.readiness.add('orchestrator', async () => {
      const health = await api.call('health', 'Check', {});
      if (!health.ready) throw new Error(`orchestrator not ready: ${JSON.stringify(health.checks)}`);
    });
    const redis = new Redis(this.config.REDIS_URL, { lazyConnect: true });
    this.redis = redis;
    redis.on('error', (err) => this.logger.warn({ err: err.message }, 'redis error'));
    await redis.connect();
    this.readiness.add('redis', async () => {
      await redis.ping();
    });
    const consoleSessions = new ConsoleSessions(redis, this.config.CONSOLE_SESSION_TTL_SECONDS);
    const app = buildApp({ config: this.config, logger: this.logger, api, readiness: this.readiness, consoleSessions });
    ({ server: this.server, port: this.port } = await listen(app, this.config.PORT, this.config.HOST));
    this.logger.info({ port: this.port }, 'gateway started');
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.readiness.markStopping();
      await closeAll(this.logger, [
        ['run event streams', () => this.api?.cancelStreams()],
        ['http server', () => this.server && closeServer(this.server)],
        ['orchestrator client', () => this.api?.close()],
        ['redis', () => this.redis?.quit()],
      ]);
    })();
    return this.stopped;
  }
}
