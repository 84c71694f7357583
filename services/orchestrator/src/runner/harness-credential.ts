import { AppError } from '@conveyor/errors';
import type { PrismaClient } from '@conveyor/db';
import type { HarnessCredential, RunnerExecution } from './runner-messages';
import type { ModelCatalog } from '../catalog/model-catalog';
import { CLI_KINDS, parseHarnessName } from '@conveyor/harnesses';
import { SecretCipherError, type SecretCipher } from '../secrets/secret-cipher';
import { readTeamSecretValue } from '../secrets/team-secrets';
import { lockRunForRunner } from './report-events';

export interface HarnessCredentialDeps {
  db: PrismaClient;
  cipher: SecretCipher;
  models: ModelCatalog;
}

const notConfigured = (message: string, details: Record<string, unknown>) =>
  new AppError('integration_not_configured', message, { details });

/**
 * The provider key of a run's CLI harness, for the model proxy of the runner holding the execution (docs/harnesses.md):
 * the team secret named by `harness_auth_secrets.<harness>_auth_secret_name`, else the team secret named after the
 * provider's own variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY). A missing or undecryptable secret is
 * `integration_not_configured`, and the runner fails the run before it starts.
 */
export async function getHarnessCredential(
  deps: HarnessCredentialDeps,
  req: RunnerExecution,
): Promise<HarnessCredential> {
  const { run, spentUsd } = await deps.db.$transaction(async (tx) => {
    const held = await lockRunForRunner(tx, req.run_id, req.execution, req.runner_id);
    const [spent] = await tx.$queryRaw<Array<{ cost: number | null }>>`
      SELECT SUM((data->>'cost_usd')::float8) AS cost FROM "RunEvent" WHERE "runId" = ${held.id}::uuid AND kind = 'usage'`;
    return { run: held, spentUsd: spent?.cost ?? 0 };
  });
  const harness = parseHarnessName(run.harness).cli;
  if (!harness)
    throw new AppError('invalid_request', `The ${run.harness} harness uses no model provider credential`);
  const { provider, secretField, defaultSecretName } = CLI_KINDS[harness];
  const config = (run.config ?? {}) as { harness_auth_secrets?: Record<string, unknown>; model_id?: unknown };
  const named = config.harness_auth_secrets?.[secretField];
  const secretName = typeof named === 'string' && named ? named : defaultSecretName;
  const source =
    typeof named === 'string' && named
      ? `harness_auth_secrets.${secretField}`
      : `the default for the ${harness} harness`;

  let apiKey: string | undefined;
  try {
    apiKey = await readTeamSecretValue(deps.db, deps.cipher, run.teamId, secretName);
  } catch (err) {
    if (!(err instanceof SecretCipherError)) throw err;
    throw notConfigured(
      `Team secret "${secretName}" (${source}) could not be decrypted; set its value again`,
      { secret_name: secretName, harness },
    );
  }
  if (!apiKey) {
    throw notConfigured(
      `Team secret "${secretName}" (${source}) does not exist; add the ${provider} API key as that team secret`,
      { secret_name: secretName, harness },
    );
  }

  const model = deps.models.resolve(
    typeof config.model_id === 'string' ? config.model_id : undefined,
    harness,
  );
  return {
    provider,
    api_key: apiKey,
    secret_name: secretName,
    models: [model.id],
    input_usd_per_million_tokens: model.inputUsdPerMillionTokens,
    output_usd_per_million_tokens: model.outputUsdPerMillionTokens,
    budget_usd: deps.models.runBudgetUsd,
    spent_usd: spentUsd,
  };
}
