import { tracing } from './tracing';
import { redactConfig } from '@conveyor/config';
import { createLogger } from '@conveyor/logger';
import { runService } from '@conveyor/runtime';
import { loadGatewayConfig } from './config';
import { Gateway } from './gateway';

const config = loadGatewayConfig();
const logger = createLogger({ service: 'gateway', level: config.LOG_LEVEL });
logger.info({ config: redactConfig(config) }, 'starting');
void runService(new Gateway(config, logger), logger, config.SHUTDOWN_TIMEOUT_MS, tracing.shutdown);
