// The orchestrator is a deployable, not a library; this entry exists for tools that measure it in-process
// (bench/), so they exercise exactly the code the RPCs run. Services never import it.
export { chooseArtifactStrategy } from './runs/list-runs';
export { listRunsRpc as listRuns } from './grpc/handlers/run-query-handlers';
export { parseRunListRequest, type RunListQuery, type RunListFilters } from './runs/run-list-filters';
export { pageQuery } from './runs/run-list-sql';
// Its settings, for the settings reference (scripts/settings-reference.js).
export { orchestratorSettings, cliSettings } from './config';
