import type { Logger } from '@conveyor/logger';
import { createMetricsRegistry } from '@conveyor/metrics';
import { closeServer, Readiness, type Service, ServiceParts, startShellServer } from '@conveyor/runtime';
import type { OrchestratorConfig } from './config';
import type { DeliveryBatchHandler } from './deliveries/delivery-consumer';
import type { DeliveryProcessor } from './deliveries/delivery-processor';
import { connectPostgres, connectRedis, outsideWorld } from './wiring/adapters';
import { startDomain } from './wiring/domain';
import { grpcHandlers } from './wiring/grpc-handlers';
import { consumeDeliveries, listenerCredentials, serveGrpc } from './wiring/transport';

/**
 * The orchestrator's composition root, read top-down: adapters (stores and the outside world), then the domain and
 * its background work, then the transport that maps onto it. Every part is registered in one list (ServiceParts) as
 * it starts; readiness reports it and shutdown stops it from there.
 */
export class Orchestrator implements Service {
  readonly readiness = new Readiness();
  /** The service's Prometheus registry, served at `/metrics` on the HTTP port (see docs/metrics.md). */
  readonly metrics = createMetricsRegistry('orchestrator');
  grpcPort = 0;
  workerGrpcPort = 0;
  httpPort = 0;
  /** The webhook delivery processor the consumer feeds (tests replay messages through it). */
  deliveries: DeliveryProcessor | undefined;
  private readonly parts = new ServiceParts(this.readiness);
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly config: OrchestratorConfig,
    private readonly logger: Logger,
    /** Replaces the webhook delivery processor (tests of the consumer alone). */
    private readonly onDeliveries?: DeliveryBatchHandler,
  ) {}

  async start(): Promise<void> {
    const { config, logger, readiness, metrics, parts } = this;
    const credentials = listenerCredentials(config);

    const db = await connectPostgres(config, parts);
    const shell = await startShellServer({
      readiness,
      metrics,
      port: config.HTTP_PORT,
      host: config.HTTP_HOST,
    });
    this.httpPort = shell.port;
    await parts.add({ name: 'http server', stop: () => closeServer(shell.server) });
    const redis = await connectRedis(config, logger, parts);
    const outside = outsideWorld(config, db);

    const domain = await startDomain({ config, logger, metrics, parts, db, redis, outside });
    this.deliveries = domain.deliveries;

    const handlers = grpcHandlers({ config, logger, readiness, db, outside, domain });
    ({ grpcPort: this.grpcPort, workerGrpcPort: this.workerGrpcPort } = await serveGrpc({
      config,
      logger,
      parts,
      db,
      credentials,
      handlers,
    }));
    if (config.CONSUME_DELIVERIES)
      await consumeDeliveries({
        config,
        logger,
        metrics,
        parts,
        handler: this.onDeliveries ?? domain.deliveries.handleBatch,
      });
    logger.info(
      { grpcPort: this.grpcPort, workerGrpcPort: this.workerGrpcPort, httpPort: this.httpPort },
      'orchestrator started',
    );
  }

  stop(): Promise<void> {
    this.stopped ??= this.parts.stop(this.logger);
    return this.stopped;
  }
}
