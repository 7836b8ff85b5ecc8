import { ConfigSchema } from "./config.schema.js";

type Prop = { env?: string; default?: unknown; description?: string; secret?: boolean };

/**
 * The README's configuration table, generated from the schema so the two cannot drift:
 * `test/docs/readme.test.ts` fails when README.md does not contain exactly this table.
 */
export function configTable(): string {
  const rows = ["| Variable | Default | Meaning |", "|---|---|---|"];
  for (const s of Object.values(ConfigSchema.properties as Record<string, Prop>)) {
    if (!s.env) continue;
    const def =
      s.default === undefined
        ? "—"
        : s.default === ""
          ? "(empty)"
          : `\`${typeof s.default === "string" ? s.default : JSON.stringify(s.default)}\``;
    const desc =
      (s.description ?? "").replaceAll("|", "\\|") + (s.secret ? " (secret: redacted in logs)" : "");
    rows.push(`| \`${s.env}\` | ${def.length > 60 ? "see docs/operations.md" : def} | ${desc} |`);
  }
  return rows.join("\n");
}
