import { z } from 'zod';

/**
 * Model proxy settings shared by the runner and the self-hosted worker program (docs/harnesses.md). The upstreams
 * are read under the CLIs' own variable names, so an installation points runs at its own gateway or a self-hosted
 * model (loopback allowed) the way it would point the CLI itself.
 */
export const modelProxyEnv = {
  ANTHROPIC_BASE_URL: z
    .string()
    .url()
    .default('https://api.anthropic.com')
    .describe('Upstream of `/anthropic` (Anthropic Messages), without `/v1`.'),
  OPENAI_BASE_URL: z
    .string()
    .url()
    .default('https://api.openai.com/v1')
    .describe('Upstream of `/openai` (Responses, Chat Completions), with `/v1` as the OpenAI SDKs expect.'),
  GOOGLE_GEMINI_BASE_URL: z
    .string()
    .url()
    .default('https://generativelanguage.googleapis.com')
    .describe('Upstream of `/gemini` (generateContent, streamGenerateContent), without the API version.'),
  MODEL_PROXY_HOST: z
    .string()
    .default('127.0.0.1')
    .describe(
      "Where the proxy listens on the platform's side; runs reach it only through their sandbox's `model-proxy` endpoint.",
    ),
  MODEL_PROXY_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(0)
    .describe('Port of the model proxy; 0 = any free port.'),
};

export type ModelProxySettings = { [K in keyof typeof modelProxyEnv]: z.infer<(typeof modelProxyEnv)[K]> };
