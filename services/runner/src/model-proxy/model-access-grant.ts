import { parseHarnessName, type CliName } from '@conveyor/harnesses';
import type { HarnessCredential__Output } from '@conveyor/proto';
import type { ModelAccess } from '../harness/harness';
import type { OrchestratorLink } from '../orchestrator-link';
import type { RunSandbox, SandboxEndpoint } from '../sandbox/run-sandbox';
import type { ModelUsage, ProxyRegistration } from './model-proxy';
import type { RunningModelProxy } from './start-model-proxy';
import { isProvider } from './provider-protocols';

/** The sandbox endpoint through which a run reaches the model proxy. */
export const MODEL_PROXY_ENDPOINT = 'model-proxy';

/** The CLI a harness name drives (`claude`, or an operator's `command:claude` adapter standing in for it), if any. */
export function modelHarnessType(harness: string): CliName | undefined {
  return parseHarnessName(harness).cli;
}

export interface GrantHooks {
  onUsage(usage: ModelUsage): void;
  onBudgetExceeded(spentUsd: number, budgetUsd: number): void;
  /** The provider refused the key (401/403): the run cannot go on with it. */
  onKeyRejected(status: number, secretName: string): void;
  /** The proxy refused a request that is not an inference call (it never reached the upstream). */
  onRefused(refusal: { host: string; port: number; reason: string }): void;
}

/**
 * One execution's access to its model through the proxy: the decrypted key stays in the runner process (the proxy
 * registration), the sandbox gets an endpoint and a per-run token. Closed when the execution ends.
 */
export class ModelAccessGrant {
  private registration: ProxyRegistration | undefined;

  private constructor(
    readonly credential: HarnessCredential__Output,
    private readonly proxy: RunningModelProxy,
  ) {}

  /** Asks the orchestrator for the run's credential (AppError `integration_not_configured` when it has none) and registers the run. */
  static async open(
    link: Pick<OrchestratorLink, 'call'>,
    proxy: RunningModelProxy,
    run: { run_id: string; execution: number; runner_id: string },
    hooks: GrantHooks,
    token?: string,
  ): Promise<ModelAccessGrant> {
    const credential = await link.call('GetHarnessCredential', run);
    return ModelAccessGrant.register(proxy, run.run_id, credential, hooks, token);
  }

  static register(
    proxy: RunningModelProxy,
    runId: string,
    credential: HarnessCredential__Output,
    hooks: GrantHooks,
    token?: string,
  ): ModelAccessGrant {
    if (!isProvider(credential.provider)) throw new Error(`unknown model provider ${credential.provider}`);
    const grant = new ModelAccessGrant(credential, proxy);
    grant.registration = proxy.proxy.register(
      {
        runId,
        provider: credential.provider,
        apiKey: credential.api_key,
        models: credential.models,
        inputUsdPerMillionTokens: credential.input_usd_per_million_tokens,
        outputUsdPerMillionTokens: credential.output_usd_per_million_tokens,
        budgetUsd: credential.budget_usd,
        spentUsd: credential.spent_usd,
        onUsage: hooks.onUsage,
        onBudgetExceeded: (spent) => hooks.onBudgetExceeded(spent, credential.budget_usd),
        onKeyRejected: (status) => hooks.onKeyRejected(status, credential.secret_name),
        onRefused: hooks.onRefused,
      },
      token,
    );
    return grant;
  }

  /** Spent before this execution started, beyond the run's budget. */
  get overBudget(): boolean {
    return this.credential.budget_usd > 0 && this.credential.spent_usd > this.credential.budget_usd;
  }

  get endpoint(): SandboxEndpoint {
    return { name: MODEL_PROXY_ENDPOINT, target: this.proxy.target };
  }

  /** What the harness hands its CLI: the proxy as seen from inside the sandbox, one prefix per wire protocol. */
  access(sandbox: RunSandbox, config: Record<string, unknown>): ModelAccess {
    const base = sandbox.endpointUrl(MODEL_PROXY_ENDPOINT);
    const reasoning = (config.harness as { reasoning_level?: unknown } | undefined)?.reasoning_level;
    return {
      baseUrls: { anthropic: `${base}/anthropic`, openai: `${base}/openai`, gemini: `${base}/gemini` },
      token: this.token,
      model: this.credential.models[0] ?? '',
      ...(typeof reasoning === 'string' && reasoning ? { reasoningLevel: reasoning } : {}),
    };
  }

  /** The token the run's agent sends: kept with the run so that a restarted runner registers the same one. */
  get token(): string {
    return this.registration!.token;
  }

  close(): void {
    this.registration?.close();
  }
}
