export { DATABASE_URL, REDIS_URL, KAFKA_BROKERS, infraEnv, type InfraEnv } from './infra-env';
export { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, DEFAULT_KAFKA_BROKERS } from './infra-env';
export {
  createTestDatabase,
  templateDatabaseName,
  type CreateTestDatabaseOptions,
  type TestDatabase,
} from './test-database';
export { uniqueName } from './unique-name';
export { createTeam, createMember, otherTeamAdmin, type TeamRole } from './team-members';
export { freePort, startPlatform, runCli, type RunningPlatform } from './start-platform';
export { apiCall, type Json } from './api-call';
export { startExtraService, type ExtraService } from './start-extra-service';
export * from './model-server';
export { createTestTrust, trustOf, type TestTrust } from './test-trust';
export { startGitHttpServer, type GitHttpServer } from './git-http-server';
export { git, seedRemote } from './git-remote';
export { startEventReceiver, type EventReceiver, type ReceivedEvent } from './event-receiver';
export { startPrivatePostgres, startPrivateRedis, type PrivateServer } from './private-servers';
export { startScriptedGitHub, type ScriptedGitHub, type GitHubRequest } from './github-rest-server';
export { startScriptedSlack, type ScriptedSlack, type SlackMessage } from './slack-api-server';
export {
  startScriptedLinear,
  type ScriptedLinear,
  type ScriptedLinearOptions,
  type LinearCall,
} from './linear-graphql-server';
export { linearIssueAssigned, type LinearWebhookPayload } from './linear-webhook-payloads';
export { observabilityTool } from './observability-tools';
export { startJaeger, type JaegerSpan, type RunningJaeger } from './jaeger';
export { startPrometheus, type RunningPrometheus } from './prometheus';
export { chartDefaultImage } from './kubernetes-default-image';
