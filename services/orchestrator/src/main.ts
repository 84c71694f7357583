import { tracing } from './tracing';
import { redactConfig } from '@conveyor/config';
import { createLogger } from '@conveyor/logger';
import { runService } from '@conveyor/runtime';
import { loadOrchestratorConfig } from './config';
import { Orchestrator } from './orchestrator';

const config = loadOrchestratorConfig();
const logger = createLogger({ service: 'orchestrator', level: config.LOG_LEVEL });
logger.info({ config: redactConfig(config) }, 'starting');
void runService(new Orchestrator(config, logger), logger, config.SHUTDOWN_TIMEOUT_MS, tracing.shutdown);
