import { tracing } from './tracing';
import { redactConfig } from '@conveyor/config';
import { createLogger } from '@conveyor/logger';
import { runService } from '@conveyor/runtime';
import { loadIngressConfig } from './config';
import { Ingress } from './ingress';

const config = loadIngressConfig();
const logger = createLogger({ service: 'ingress', level: config.LOG_LEVEL });
logger.info({ config: redactConfig(config) }, 'starting');
void runService(new Ingress(config, logger), logger, config.SHUTDOWN_TIMEOUT_MS, tracing.shutdown);
