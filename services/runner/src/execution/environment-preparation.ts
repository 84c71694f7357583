import { setUpEnvironment, type EnvironmentSpec } from '../environment-setup';
import type { RunSandbox } from '../sandbox/run-sandbox';
import { reportStep, type ExecutionContext } from './execution-context';

/**
 * Makes the laid-out workspace ready for the agent: the environment's repositories cloned and its setup commands run,
 * in the sandbox (a debug session reuses the failed run's workspace as it was). The one step between the sandbox and
 * the harness, where starting from a kept environment instead would fit. Throws `SetupFailure` when setup fails.
 */
export async function prepareEnvironment(
  ctx: ExecutionContext,
  environment: EnvironmentSpec,
  sandbox: RunSandbox,
  env: Record<string, string>,
): Promise<void> {
  if (ctx.assignment.debug_session) return;
  if (environment.repositories.length + environment.setup_commands.length === 0) return;
  reportStep(ctx, 'setup_commands', 'started');
  await setUpEnvironment(environment, sandbox, env, ctx.signal, (detail) =>
    ctx.reporter.emit({ kind: 'log', level: 'info', text: detail }),
  );
  reportStep(ctx, 'setup_commands', 'succeeded');
  ctx.trace.mark('environment_ready');
}
