import type { ServiceName } from '@conveyor/pki';
import type { OrchestratorHandlers } from './orchestrator-handler-set';

/**
 * Who may be at the other end of a call: a core service named by its mTLS certificate, or a self-hosted worker
 * authenticated by its team's worker token on the worker endpoint (docs/service-trust.md).
 */
export type PeerKind = ServiceName | 'worker';

type PermissionTable = {
  [S in keyof OrchestratorHandlers]: { [M in keyof OrchestratorHandlers[S]]?: readonly PeerKind[] };
};

// Calls made on behalf of an authenticated API caller: only the gateway's `Caller` is believed.
const GATEWAY = ['gateway'] as const;

/**
 * The one table of who may call what, enforced by the transport (rpc-guard.ts) before any handler runs. An RPC
 * with no entry is refused for everyone (fail closed): a new RPC is unreachable until it is listed here, and
 * rpc-permissions.test.ts fails while any RPC of the protos is missing.
 */
export const RPC_PERMISSIONS: PermissionTable = {
  health: { Check: ['gateway', 'ingress', 'runner'] },
  auth: { Authenticate: GATEWAY },
  runs: {
    CreateRun: GATEWAY,
    GetRun: GATEWAY,
    ListRuns: GATEWAY,
    CancelRun: GATEWAY,
    SubmitFollowup: GATEWAY,
    GetTimeline: GATEWAY,
    GetConversation: GATEWAY,
    GetTranscript: GATEWAY,
    // The console's live run view (docs/console.md).
    WatchRunEvents: GATEWAY,
    ListHandoffAttachments: GATEWAY,
    // Harnesses upload snapshots through the gateway with their run-scoped key.
    UploadHandoffAttachment: GATEWAY,
    // Anonymous redirect checks still arrive through the gateway (with no Caller).
    CheckRedirect: GATEWAY,
    // The console's overview (docs/console.md).
    GetRunInsights: GATEWAY,
  },
  // Pool runners claim from the queue; self-hosted workers are handed runs already claimed (WorkerHub).
  runner: {
    ClaimRun: ['runner'],
    ReportEvents: ['runner', 'worker'],
    Heartbeat: ['runner', 'worker'],
    CompleteRun: ['runner', 'worker'],
    // The decrypted provider key, for the model proxy of the pool runner or self-hosted worker holding the execution
    // (docs/harnesses.md); a worker only for its own team's runs (workers/worker-endpoint.ts).
    GetHarnessCredential: ['runner', 'worker'],
    // The run's branch, pushed by the orchestrator with the team's push credential (docs/harnesses.md).
    PushRunBranch: ['runner', 'worker'],
    // A GitHub App's repository, fetched by the orchestrator with the installation token (docs/integrations.md).
    FetchRunRepository: ['runner', 'worker'],
    // Pool runner replicas hand runs to each other (docs/sandbox.md "Run leases"); a self-hosted worker never: its
    // runs are its own machine's, and a lease's record is another team's run key.
    SaveRunLease: ['runner'],
    ReleaseRunLease: ['runner'],
    AdoptRuns: ['runner'],
    // The orphan reconciler of the Kubernetes backend; a worker has no Pods to collect.
    GetRunStates: ['runner'],
  },
  blobs: { ReadBlob: GATEWAY },
  artifacts: {
    // Harnesses report artifacts through the gateway with their run-scoped key.
    ReportArtifact: GATEWAY,
    GetArtifact: GATEWAY,
    GetArtifactDownload: GATEWAY,
    GetRunByExternalReference: GATEWAY,
    SubmitScores: GATEWAY,
  },
  factories: {
    CreateFactory: GATEWAY,
    ListFactories: GATEWAY,
    GetFactory: GATEWAY,
    DeleteFactory: GATEWAY,
    ApplyDefinitions: GATEWAY,
    CreateWebhook: GATEWAY,
    ListWebhooks: GATEWAY,
    GetWebhook: GATEWAY,
    SetWebhookEnabled: GATEWAY,
    DeleteWebhook: GATEWAY,
    RotateWebhookSecret: GATEWAY,
    ListDeliveries: GATEWAY,
    GetDelivery: GATEWAY,
    TestFilter: GATEWAY,
    CreateAutomation: GATEWAY,
    ListAutomations: GATEWAY,
    GetAutomation: GATEWAY,
    UpdateAutomation: GATEWAY,
    DeleteAutomation: GATEWAY,
    CreateSecret: GATEWAY,
    SetSecretValue: GATEWAY,
    ListSecrets: GATEWAY,
    GetSecret: GATEWAY,
    DeleteSecret: GATEWAY,
  },
  // Returns a webhook's decrypted verification secret: the ingress alone verifies deliveries.
  webhookIngress: { ResolveWebhook: ['ingress'] },
  schedules: {
    CreateSchedule: GATEWAY,
    ListSchedules: GATEWAY,
    GetSchedule: GATEWAY,
    UpdateSchedule: GATEWAY,
    DeleteSchedule: GATEWAY,
    PauseSchedule: GATEWAY,
    ResumeSchedule: GATEWAY,
  },
  catalog: {
    ListSkills: GATEWAY,
    ListModels: GATEWAY,
    CreateEnvironment: GATEWAY,
    ListEnvironments: GATEWAY,
    GetEnvironment: GATEWAY,
    UpdateEnvironment: GATEWAY,
    DeleteEnvironment: GATEWAY,
    ListEnvironmentGuests: GATEWAY,
    InviteEnvironmentGuest: GATEWAY,
    RemoveEnvironmentGuest: GATEWAY,
    ListEnvironmentInvitations: GATEWAY,
    AcceptEnvironmentInvitation: GATEWAY,
    DeleteEnvironmentInvitation: GATEWAY,
    EnableEnvironmentLink: GATEWAY,
    DisableEnvironmentLink: GATEWAY,
    RedeemEnvironmentLink: GATEWAY,
  },
  identities: {
    CreateAgentIdentity: GATEWAY,
    ListAgentIdentities: GATEWAY,
    GetAgentIdentity: GATEWAY,
    UpdateAgentIdentity: GATEWAY,
    DeleteAgentIdentity: GATEWAY,
    CreateAgentIdentityKey: GATEWAY,
    ListAgentIdentityKeys: GATEWAY,
    RevokeAgentIdentityKey: GATEWAY,
  },
  workers: {
    Connect: ['worker'],
    ListConnectedWorkers: GATEWAY,
  },
  events: {
    CreateEventEndpoint: GATEWAY,
    ListEventEndpoints: GATEWAY,
    GetEventEndpoint: GATEWAY,
    UpdateEventEndpoint: GATEWAY,
    DeleteEventEndpoint: GATEWAY,
    RotateEventEndpointSecret: GATEWAY,
    ListEventAttempts: GATEWAY,
    ReplayEvent: GATEWAY,
  },
  integrations: {
    CreateGitHubApp: GATEWAY,
    ListGitHubApps: GATEWAY,
    GetGitHubApp: GATEWAY,
    DeleteGitHubApp: GATEWAY,
    StartGitHubAppManifest: GATEWAY,
    CompleteGitHubAppManifest: GATEWAY,
    CreateSlackApp: GATEWAY,
    ListSlackApps: GATEWAY,
    GetSlackApp: GATEWAY,
    DeleteSlackApp: GATEWAY,
    CreateLinearIntegration: GATEWAY,
    ListLinearIntegrations: GATEWAY,
    GetLinearIntegration: GATEWAY,
    DeleteLinearIntegration: GATEWAY,
  },
};

/** The peers allowed to call `service.method`; none for anything not in the table. */
export function allowedPeers(service: keyof OrchestratorHandlers, method: string): readonly PeerKind[] {
  const entry = RPC_PERMISSIONS[service] as Record<string, readonly PeerKind[] | undefined>;
  return Object.hasOwn(entry, method) ? (entry[method] ?? []) : [];
}
