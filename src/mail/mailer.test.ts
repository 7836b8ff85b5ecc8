import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { createMailer } from "./mailer.js";
import { resetMail } from "./templates.js";

describe("createMailer without SMTP_URL", () => {
  const dir = mkdtempSync(join(tmpdir(), "omniname-mail-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("writes an .eml to DATA_DIR/outbox (mode 0600) and logs recipient and file, never the body", async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: "debug" },
      new Writable({
        write(c, _e, cb) {
          lines.push(String(c));
          cb();
        },
      }),
    );
    const mailer = createMailer({ from: "omniname <no-reply@x.invalid>", dataDir: dir, logger });
    const token = "SECRETtokenSECRETtokenSECRETtoken123";
    await mailer.send(
      resetMail("user@example.test", `http://console.test/console/reset-password?token=${token}`, 60),
    );
    const [file] = readdirSync(join(dir, "outbox"));
    const eml = readFileSync(join(dir, "outbox", file), "utf8");
    expect(eml).toMatch(/^To: user@example.test$/m);
    expect(eml.replace(/=\r?\n/g, "")).toContain(token);
    expect(statSync(join(dir, "outbox", file)).mode & 0o777).toBe(0o600);
    const log = lines.join("");
    expect(log).toContain("user@example.test");
    expect(log).toContain(file);
    expect(log).not.toContain(token);
  });
});
