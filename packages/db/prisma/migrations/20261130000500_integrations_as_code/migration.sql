-- Integrations applied from definition files (`integrations/<name>.yaml`, `conveyor apply`).
ALTER TABLE "GitHubApp" ADD COLUMN "definedAsCode" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "SlackApp" ADD COLUMN "definedAsCode" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "LinearIntegration" ADD COLUMN "definedAsCode" BOOLEAN NOT NULL DEFAULT false;
