/** The API's JSON shapes the console reads (contract §2.2, §4.1; docs/webhooks.md). */

export interface Principal {
  uid: string;
  type: string;
  display_name?: string;
  email?: string;
}

export interface RunItem {
  run_id: string;
  title: string;
  prompt: string;
  state: string;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  source?: string;
  creator?: Principal;
  is_run_type_cancellable: boolean;
  schedule?: { schedule_id: string; schedule_name?: string };
  agent_skill?: { name?: string; full_path: string };
  artifacts: Array<{ artifact_type: string; created_at: string; data: Record<string, unknown> }>;
  status_message?: { message: string; error_code?: string };
  agent_config?: Record<string, unknown>;
}

export interface RunList {
  runs: RunItem[];
  page_info: { has_next_page: boolean; next_cursor?: string };
}

export interface Session {
  team_id: string;
  principal_type: string;
  principal_id: string;
  role: string;
  display_name: string | null;
  email: string | null;
  csrf_token: string;
}

export interface Factory {
  factory_id: string;
  name: string;
}

export interface Webhook {
  webhook_uid: string;
  factory_id: string;
  name: string;
  auth_mode: string;
  signature_scheme?: string | null;
  enabled: boolean;
  url: string;
  secret_status: string;
}

export interface Automation {
  automation_id: string;
  factory_id: string;
  name: string;
  prompt: string;
  agent_config: { environment_id?: string };
  enabled: boolean;
  trigger: { filter?: { webhook_ids?: string[]; payload?: unknown } } | null;
  managed_by: string;
}

export interface FilterTest {
  result: string;
  would_trigger: boolean;
  webhook_check: { passed: boolean; detail: string };
  payload_check: { passed: boolean; detail: string; mismatches: string[] };
}

/** What the three integrations share in their listings (docs/integrations.md). */
export interface Integration {
  name: string;
  webhook_url: string;
  environment_id: string | null;
  status: 'active' | 'broken';
  broken_reason: string | null;
  created_at: string;
}

export interface Delivery {
  id: string;
  delivery_id: string;
  label: string;
  size_bytes: number;
  received_at: string;
  identity_source: string;
  reason: string | null;
  run_ids: string[];
  has_payload: boolean;
  payload?: unknown;
  outcome?: unknown;
}

export interface Schedule {
  id: string;
  name: string;
  cron_schedule: string;
  timezone: string;
  enabled: boolean;
  prompt: string;
  history: {
    last_ran: string | null;
    next_run: string | null;
    recent_runs?: Array<{ run_id: string; state: string; title: string; created_at: string }>;
  };
  last_spawn_error: string | null;
}

/** An outgoing event endpoint (docs/events.md). */
export interface EventEndpoint {
  endpoint_id: string;
  url: string;
  event_types: string[];
  enabled: boolean;
  description: string | null;
  disabled_reason: string | null;
  created_at: string;
}

/** One delivery attempt of an event to an endpoint, newest first. */
export interface EventAttempt {
  event_id: string;
  event_type: string;
  run_id: string;
  attempted_at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  next_attempt_at: string | null;
  delivery_status: 'pending' | 'succeeded' | 'failed';
}

/** `GET /agent/environments` (docs/catalog.md). */
export interface Environment {
  uid: string;
  config: {
    name?: string;
    description?: string | null;
    repositories?: Array<{ url: string; directory?: string; ref?: string }>;
    setup_commands?: string[] | null;
    allowed_hosts?: string[] | null;
    snapshot?: boolean;
  };
  access?: string;
  creator?: Principal;
  last_updated: string;
  setup_failed: boolean;
  last_task_created?: { id: string; title: string; state: string };
  /** The team's snapshot of it as last reported (docs/snapshots.md "State in the API"). */
  snapshot?: {
    state: 'none' | 'building' | 'ready' | 'failed';
    snapshot_id?: string | null;
    updated_at?: string | null;
    run_id?: string | null;
  };
}

export interface EnvironmentList {
  environments: Environment[];
}

export interface ModelList {
  models: Array<{ id: string; display_name: string; disabled: boolean; is_default: boolean }>;
  default_model_id: string;
}

export interface Secret {
  name: string;
  created_at: string;
  updated_at: string;
  used_by_webhooks: string[];
}

export interface AgentIdentity {
  uid: string;
  name: string;
  description: string | null;
  available: boolean;
  created_at: string;
}

export interface AgentKey {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  key?: string;
}

export interface Guests {
  guests: Array<{ user_id: string; display_name: string; email: string; granted_at: string }>;
  invitations: Array<{ invitation_id: string; email: string; invited_at: string }>;
}

export interface Worker {
  worker_id: string;
  connection_id: string;
  hostname?: string;
  version?: string;
  capacity: number;
  active_runs: number;
  connected_at: string;
  last_heartbeat_at: string;
}

/** `GET /insights` (docs/console.md "Overview"). */
export interface Insights {
  generated_at: string;
  runs_per_hour: Array<{ hour: string; state: string; count: number }>;
  time_to_agent: Array<{ hour: string; p50_ms: number; p95_ms: number; runs: number }>;
  usage_per_day: Array<{
    day: string;
    model_id: string;
    input_tokens: number;
    output_tokens: number;
    cost_usd: number;
  }>;
  deliveries_per_minute: Array<{ minute: string; outcome: string; count: number }>;
  event_deliveries: { succeeded: number; failed: number; pending: number; success_rate: number | null };
  capacity: {
    queued: number;
    running: number;
    pool_runners: number;
    workers: number;
    worker_capacity: number;
    worker_active_runs: number;
  };
}
