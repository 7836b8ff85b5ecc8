import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import nodemailer from "nodemailer";
import type { Logger } from "pino";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends account e-mails. The body carries one-time links: it is never logged. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

interface MailerOptions {
  smtpUrl?: string | undefined;
  from: string;
  dataDir: string;
  logger: Logger;
}

/**
 * SMTP through nodemailer when `SMTP_URL` is set. Without it, each message is written as an .eml
 * file (mode 0600) to DATA_DIR/outbox/ so an operator of an embedded install can still open the
 * links; the log line names the recipient, the subject and the file, never the body.
 */
export function createMailer(opts: MailerOptions): Mailer {
  if (opts.smtpUrl) {
    const transport = nodemailer.createTransport(opts.smtpUrl);
    return {
      async send(m) {
        const info = await transport.sendMail({
          from: opts.from,
          to: m.to,
          subject: m.subject,
          text: m.text,
        });
        opts.logger.info({ mail: { to: m.to, subject: m.subject, messageId: info.messageId } }, "mail sent");
      },
      close: () => transport.close(),
    };
  }
  const outbox = join(opts.dataDir, "outbox");
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
  return {
    async send(m) {
      const info = await transport.sendMail({ from: opts.from, to: m.to, subject: m.subject, text: m.text });
      mkdirSync(outbox, { recursive: true, mode: 0o700 });
      const file = join(
        outbox,
        `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomBytes(4).toString("hex")}.eml`,
      );
      writeFileSync(file, info.message as Buffer, { mode: 0o600 });
      opts.logger.info(
        { mail: { to: m.to, subject: m.subject, file } },
        "mail written to the outbox (SMTP_URL unset)",
      );
    },
    close: () => {},
  };
}
