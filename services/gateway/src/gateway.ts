import type { Server } from 'node:http';
import { Redis } from 'ioredis';
import type { Logger } from '@conveyor/logger';
import { mutualTlsCredentials } from '@conveyor/proto';
import {
  closeAll,
  closeServer,
  listen,
  Readiness,
  type Service,
  logConnectionOutages,
} from '@conveyor/runtime';
import { buildApp } from './app';
import { publicUrl, type GatewayConfig } from './config';
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
    const api = new OrchestratorApi(
      this.config.ORCHESTRATOR_ADDR,
      mutualTlsCredentials(this.config),
      this.config.GRPC_DEADLINE_MS,
    );
    this.api = api;
    this.readiness.add('orchestrator', async () => {
      const health = await api.call('health', 'Check', {});
      if (!health.ready) throw new Error(`orchestrator not ready: ${JSON.stringify(health.checks)}`);
    });
    // No offline queue: while Redis is unreachable, rate limiting falls back to memory at once instead of waiting.
    const redis = new Redis(this.config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    logConnectionOutages(redis, this.logger, 'redis (rate limits, key cache, console sessions)');
    this.redis = redis;
    const app = buildApp({
      config: this.config,
      logger: this.logger,
      api,
      redis,
      readiness: this.readiness,
      publicUrl: () => publicUrl(this.config, this.port),
    });
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
        ['redis', () => this.redis?.disconnect()],
      ]);
    })();
    return this.stopped;
  }
}
