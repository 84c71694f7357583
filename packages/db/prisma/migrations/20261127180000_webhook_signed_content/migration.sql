-- Signed webhook deliveries cannot be replayed (docs/webhooks.md "Replays"): each signed message a webhook accepted,
-- by the digest of what its signature covers, kept as long as the webhook (the delivery log is pruned after 7 days).

-- CreateTable
CREATE TABLE "WebhookSignedContent" (
    "webhookId" TEXT NOT NULL,
    "digest" TEXT NOT NULL,
    "sourcePosition" TEXT NOT NULL,
    "acceptedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WebhookSignedContent_pkey" PRIMARY KEY ("webhookId","digest")
);

-- AddForeignKey
ALTER TABLE "WebhookSignedContent" ADD CONSTRAINT "WebhookSignedContent_webhookId_fkey" FOREIGN KEY ("webhookId") REFERENCES "Webhook"("id") ON DELETE CASCADE ON UPDATE CASCADE;
