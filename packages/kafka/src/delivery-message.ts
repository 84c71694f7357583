import { z } from 'zod';

export const DELIVERY_LABELS = [
  'Accepted',
  'Duplicate',
  'Rejected (auth)',
  'Rejected (invalid JSON)',
  'Rejected (too large)',
] as const;
export type DeliveryLabel = (typeof DELIVERY_LABELS)[number];

/** The delivery log's reason for a `Duplicate`, by what was accepted before: the same ID, or the same signed message. */
export const DUPLICATE_REASONS = {
  delivery_id: 'delivery ID already accepted',
  signed_content: 'replay: the same signed content was already accepted',
} as const;

/**
 * What the ingress publishes for every delivery it answers. Accepted ones carry the raw body (base64, exactly the
 * bytes received); rejected and duplicate ones carry metadata only, so the orchestrator can keep one log.
 */
export const deliveryMessageSchema = z.object({
  version: z.literal(1),
  webhookUid: z.string().min(1),
  deliveryId: z.string().min(1),
  label: z.enum(DELIVERY_LABELS),
  /** Where the delivery identity came from: configured header, provider header, X-Service-Delivery-Id, body hash. */
  identitySource: z.enum(['configured_header', 'provider_header', 'service_header', 'body_hash', 'none']),
  receivedAt: z.string().datetime(),
  sizeBytes: z.number().int().nonnegative(),
  bodyBase64: z.string().optional(),
  /**
   * Accepted signature deliveries: the hex SHA-256 of what the signature covers (webhook-auth's
   * signedContentDigest). The orchestrator accepts one digest once per webhook, so a replayed signed body starts
   * nothing whatever its delivery header says.
   */
  signedDigest: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  reason: z.string().optional(),
  /** The sender as the ingress saw it (client IP, proxies trusted per TRUST_PROXY), for the delivery log. */
  sender: z.string().optional(),
});

export type DeliveryMessage = z.infer<typeof deliveryMessageSchema>;

export function encodeDeliveryMessage(message: DeliveryMessage): Buffer {
  return Buffer.from(JSON.stringify(deliveryMessageSchema.parse(message)));
}

/** Returns undefined for a message that is not ours (poison messages are skipped and logged, never crash the consumer). */
export function decodeDeliveryMessage(value: Buffer | null): DeliveryMessage | undefined {
  if (!value) return undefined;
  try {
    const parsed = deliveryMessageSchema.safeParse(JSON.parse(value.toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
