import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { AppError } from '@conveyor/errors';
import { CLI_KINDS, CLI_NAMES, type CliName } from '@conveyor/harnesses';

const cliHarness = z.enum(CLI_NAMES);

/** The CLI harness that speaks a provider's API, when a model names none (`harnesses`). */
const HARNESS_BY_PROVIDER = new Map<string, CliName>(
  CLI_NAMES.flatMap((name) => CLI_KINDS[name].catalogProviders.map((provider) => [provider, name] as const)),
);

const modelSchema = z
  .object({
    id: z.string().min(1).max(128),
    provider: z.string().min(1).max(64),
    display_name: z.string().min(1).max(200).optional(),
    cost: z
      .object({
        input_usd_per_million_tokens: z.number().min(0).default(0),
        output_usd_per_million_tokens: z.number().min(0).default(0),
      })
      .default({}),
    disabled: z.boolean().default(false),
    disabled_reason: z.string().max(500).optional(),
    /** The CLI harnesses that can use the model; by default the one speaking its provider's API. */
    harnesses: z.array(cliHarness).optional(),
  })
  .strict();

const catalogSchema = z
  .object({
    default_model_id: z.string().min(1).optional(),
    /** Cost in USD one run may reach through the model proxy before it is stopped (`budget_exceeded`); 0 = none. */
    run_budget_usd: z.number().min(0).default(0),
    models: z.array(modelSchema).min(1),
  })
  .strict()
  .superRefine((c, ctx) => {
    const ids = new Set<string>();
    for (const m of c.models) {
      if (ids.has(m.id))
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['models'],
          message: `duplicate model id ${m.id}`,
        });
      ids.add(m.id);
    }
    const fallback = c.default_model_id ?? c.models.find((m) => !m.disabled)?.id;
    const chosen = c.models.find((m) => m.id === fallback);
    if (!chosen)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['default_model_id'],
        message: 'must name a model of the catalog',
      });
    else if (chosen.disabled)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['default_model_id'],
        message: 'the default model must not be disabled',
      });
  });

export interface CatalogModel {
  id: string;
  provider: string;
  displayName: string;
  inputUsdPerMillionTokens: number;
  outputUsdPerMillionTokens: number;
  isDefault: boolean;
  disabled: boolean;
  disabledReason: string;
  harnesses: CliName[];
}

/** Used when no catalog is configured: a small, plausible set so runs and the models endpoint work out of the box. */
export const BUILT_IN_MODEL_CATALOG = {
  default_model_id: 'claude-sonnet-4',
  models: [
    {
      id: 'claude-sonnet-4',
      provider: 'anthropic',
      display_name: 'Claude Sonnet 4',
      cost: { input_usd_per_million_tokens: 3, output_usd_per_million_tokens: 15 },
    },
    {
      id: 'claude-opus-4',
      provider: 'anthropic',
      display_name: 'Claude Opus 4',
      cost: { input_usd_per_million_tokens: 15, output_usd_per_million_tokens: 75 },
    },
    {
      id: 'gpt-5',
      provider: 'openai',
      display_name: 'GPT-5',
      cost: { input_usd_per_million_tokens: 1.25, output_usd_per_million_tokens: 10 },
    },
    {
      id: 'gemini-2.5-pro',
      provider: 'google',
      display_name: 'Gemini 2.5 Pro',
      cost: { input_usd_per_million_tokens: 1.25, output_usd_per_million_tokens: 10 },
    },
  ],
};

/**
 * The models runs may use, from configuration. Resolution at run creation: the requested model must exist and be
 * enabled; a run naming none gets the default.
 */
export class ModelCatalog {
  readonly models: readonly CatalogModel[];
  readonly defaultModelId: string;
  readonly runBudgetUsd: number;

  constructor(raw: unknown) {
    const parsed = catalogSchema.safeParse(raw);
    if (!parsed.success) {
      throw new Error(
        `invalid model catalog: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
      );
    }
    const c = parsed.data;
    this.defaultModelId = c.default_model_id ?? c.models.find((m) => !m.disabled)!.id;
    this.runBudgetUsd = c.run_budget_usd;
    this.models = c.models.map((m) => ({
      id: m.id,
      provider: m.provider,
      displayName: m.display_name ?? m.id,
      inputUsdPerMillionTokens: m.cost.input_usd_per_million_tokens,
      outputUsdPerMillionTokens: m.cost.output_usd_per_million_tokens,
      isDefault: m.id === this.defaultModelId,
      disabled: m.disabled,
      disabledReason: m.disabled ? (m.disabled_reason ?? 'Disabled by the administrator') : '',
      harnesses: m.harnesses ?? [HARNESS_BY_PROVIDER.get(m.provider)].filter((h) => h !== undefined),
    }));
  }

  /** MODELS_CONFIG (JSON) wins over MODELS_CONFIG_FILE; neither = the built-in catalog. Fails at start, not per request. */
  static fromConfig(
    config: { MODELS_CONFIG: string; MODELS_CONFIG_FILE: string },
    readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
  ): ModelCatalog {
    const text =
      config.MODELS_CONFIG.trim() || (config.MODELS_CONFIG_FILE ? readFile(config.MODELS_CONFIG_FILE) : '');
    if (!text) return new ModelCatalog(BUILT_IN_MODEL_CATALOG);
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new Error(`invalid model catalog: not JSON (${(err as Error).message})`);
    }
    return new ModelCatalog(raw);
  }

  /**
   * The model a run uses: the requested one when it exists, is enabled and (for a CLI harness) is offered for that
   * harness; when none is named, the catalog default, or for a CLI harness that cannot use it, its first model.
   */
  resolve(requested: string | undefined, harness?: CliName): CatalogModel {
    const id = requested?.trim() || this.defaultFor(harness);
    const model = this.models.find((m) => m.id === id);
    if (!model) {
      throw new AppError(
        'invalid_request',
        `Unknown model "${id}"; GET /agent/models lists the available models`,
        { details: { model_id: id } },
      );
    }
    if (model.disabled) {
      throw new AppError('invalid_request', `Model "${id}" is disabled: ${model.disabledReason}`, {
        details: { model_id: id, disabled_reason: model.disabledReason },
      });
    }
    if (harness && !model.harnesses.includes(harness)) {
      const offered = this.usableBy(harness).map((m) => m.id);
      throw new AppError(
        'invalid_request',
        `Model "${id}" cannot be used with the ${harness} harness; models for it: ${offered.join(', ') || 'none'}`,
        {
          details: { model_id: id, harness, models: offered },
        },
      );
    }
    return model;
  }

  /** Enabled models a CLI harness can use. */
  usableBy(harness: CliName): CatalogModel[] {
    return this.models.filter((m) => !m.disabled && m.harnesses.includes(harness));
  }

  private defaultFor(harness: CliName | undefined): string {
    if (!harness) return this.defaultModelId;
    const usable = this.usableBy(harness);
    const chosen = usable.find((m) => m.id === this.defaultModelId) ?? usable[0];
    if (!chosen)
      throw new AppError(
        'invalid_request',
        `This installation offers no model for the ${harness} harness (GET /agent/models lists the models)`,
        { details: { harness } },
      );
    return chosen.id;
  }
}
