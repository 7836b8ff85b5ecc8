import { Type } from "@sinclair/typebox";

/**
 * The webhooks' settings (docs/console-api.md, "Webhooks"; docs/operations.md). Spread into
 * ConfigSchema (config.schema.ts) after the change feed's, in the README table's order.
 */
export const WEBHOOK_SETTINGS = {
  webhookAllowLoopback: Type.Optional(
    Type.Boolean({
      env: "WEBHOOK_ALLOW_LOOPBACK",
      description:
        "Webhook URLs may point at loopback (127.0.0.0/8, ::1), over http too; absent: true with the embedded defaults (no DATABASE_URL, no RPC_URL_*), false otherwise. Private, link-local and other non-public addresses are always refused",
    }),
  ),
  webhookRetryHours: Type.Number({
    minimum: 0.001,
    maximum: 168,
    default: 24,
    env: "WEBHOOK_RETRY_HOURS",
    description:
      "How long a webhook delivery is retried (exponential backoff); an endpoint failing this long is disabled and the project's owners and admins are mailed",
  }),
};
