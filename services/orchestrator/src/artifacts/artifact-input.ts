import { z } from 'zod';
import { AppError } from '@conveyor/errors';
import { canonicalizeUrl } from './canonical-url';

/** Largest file or screenshot a harness may upload in one report (decoded bytes). */
export const MAX_ARTIFACT_BYTES = 5 * 1024 * 1024;
/** Largest plan document, in bytes of UTF-8. */
export const MAX_PLAN_BYTES = 1024 * 1024;

const mimeType = z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a MIME type such as text/plain');
const httpUrl = z
  .string()
  .max(2048)
  .refine((u) => canonicalizeUrl(u) !== undefined, 'must be an http(s) URL without credentials');

/**
 * What a harness reports, per type (the `data` of contract §2.3 minus what the platform fills in: uids, sizes,
 * file names). Files and screenshots come with bytes; a plan's markdown is `data.content`.
 */
export const reportedDataSchemas = {
  FILE: z.object({
    filepath: z.string().min(1).max(1024),
    mime_type: mimeType,
    description: z.string().max(2000).optional(),
    title: z.string().max(80).optional(),
  }),
  SCREENSHOT: z.object({
    mime_type: z.string().regex(/^image\/[\w.+-]+$/, 'must be an image MIME type'),
    description: z.string().max(2000).optional(),
  }),
  PLAN: z.object({
    content: z
      .string()
      .refine(
        (c) => Buffer.byteLength(c, 'utf8') <= MAX_PLAN_BYTES,
        `must be at most ${MAX_PLAN_BYTES} bytes`,
      ),
    title: z.string().max(300).optional(),
    url: httpUrl.optional(),
  }),
  PULL_REQUEST: z.object({ url: httpUrl, branch: z.string().min(1).max(255) }),
  EXTERNAL_REFERENCE: z.object({
    reference_type: z.string().min(1).max(64),
    url: httpUrl,
    title: z.string().max(300).optional(),
    metadata: z.record(z.unknown()).optional(),
  }),
} as const;

export type ReportedType = keyof typeof reportedDataSchemas;
export const REPORTED_TYPES = Object.keys(reportedDataSchemas) as ReportedType[];
export const NEEDS_BYTES: ReadonlySet<ReportedType> = new Set(['FILE', 'SCREENSHOT']);

export function parseReportedData<T extends ReportedType>(
  type: T,
  data: unknown,
): z.infer<(typeof reportedDataSchemas)[T]> {
  const parsed = reportedDataSchemas[type].safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AppError(
      'invalid_request',
      `data.${issue?.path.join('.') || ''}: ${issue?.message ?? 'invalid'}`.replace('data.:', 'data:'),
    );
  }
  return parsed.data as z.infer<(typeof reportedDataSchemas)[T]>;
}

/** The last path component, as contract §2.3 defines `filename`. */
export const fileNameOf = (filepath: string): string =>
  filepath.split(/[\\/]/).filter(Boolean).pop() ?? filepath;
