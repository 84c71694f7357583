import type { PrismaClient } from '@conveyor/db';
import type { Redis } from 'ioredis';
import type { Logger } from '@conveyor/logger';
import type { OrchestratorConfig } from '../config';
import { DeliveryProcessor, type StartRun } from '../deliveries/delivery-processor';
import { DeliveryRetention } from '../deliveries/delivery-retention';
import { createRun, type CreateRunDeps } from '../runs/create-run';
import { SecretCipher } from '../secrets/secret-cipher';
import { WebhookVersions } from './webhook-versions';

export interface WebhookModuleDeps {
  config: Pick<OrchestratorConfig, 'WEBHOOK_BASE_URL' | 'CONVEYOR_SECRETS_KEY' | 'CONVEYOR_SECRETS_PREVIOUS_KEYS' | 'NODE_ENV' | 'DELIVERY_RETENTION_INTERVAL_MS'>;
  db: PrismaClient;
  redis: Redis;
  logger: Logger;
  /** How runs start (shared with the API), including the catalog checks. */
  runDeps: CreateRunDeps;
}

/**
 * Factories, webhooks, automations, secrets and the delivery log, wired for the orchestrator: the cipher and versions
 * its gRPC handlers use, the Kafka delivery handler (which starts runs through createRun) and the delivery-log retention job.
 */
export class WebhookModule {
  readonly cipher: SecretCipher;
  readonly versions: WebhookVersions;
  readonly processor: DeliveryProcessor;
  private readonly retention: DeliveryRetention;

  constructor({ config, db, redis, logger, runDeps }: WebhookModuleDeps) {
    this.cipher = SecretCipher.fromEnv(config);
    this.versions = new WebhookVersions(redis);
    const startRun: StartRun = (caller, input) => createRun(runDeps, caller, input);
    this.processor = new DeliveryProcessor({ db, logger: logger.child({ component: 'delivery-processor' }), startRun });
    this.retention = new DeliveryRetention(db, logger.child({ component: 'delivery-retention' }), config.DELIVERY_RETENTION_INTERVAL_MS);
  }


  start(): void {
    this.retention.start();
  }

  async stop(): Promise<void> {
    await this.retention.stop();
  }
}
