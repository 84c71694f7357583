import { tracing } from './tracing';
import { redactConfig } from '@conveyor/config';
import { createLogger } from '@conveyor/logger';
import { runService } from '@conveyor/runtime';
import { loadRunnerConfig } from './config';
import { Runner } from './runner';

const config = loadRunnerConfig();
const logger = createLogger({ service: 'runner', level: config.LOG_LEVEL });
logger.info({ config: redactConfig(config) }, 'starting');
void runService(new Runner(config, logger), logger, config.SHUTDOWN_TIMEOUT_MS, tracing.shutdown);
