import { tracing } from './worker-tracing';
import { redactConfig } from '@conveyor/config';
import { createLogger } from '@conveyor/logger';
import { runService } from '@conveyor/runtime';
import { SelfHostedWorker } from './self-hosted-worker';
import { loadWorkerConfig } from './worker-config';

// The self-hosted worker program: `CONVEYOR_WORKER_TOKEN=cvw_... WORKER_ID=my-box WORKER_ENDPOINT=host:50052 WORKER_ENDPOINT_CA_FILE=ca.pem node dist/worker-main.js`.
const config = loadWorkerConfig();
const logger = createLogger({ service: 'worker', level: config.LOG_LEVEL });
logger.info({ config: redactConfig(config) }, 'starting');
const worker = new SelfHostedWorker(config, logger, () => {
  void worker.stop().finally(() => process.exit(1));
});
void runService(worker, logger, config.SHUTDOWN_TIMEOUT_MS, tracing.shutdown);
