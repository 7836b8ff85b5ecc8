import type { Command } from "./command.js";
import { adminCommand } from "./admin.command.js";
import { crawlCommand } from "./crawl.command.js";
import { devnetCommand } from "./devnet.command.js";
import { dnssecCommand } from "./dnssec.command.js";
import { dnsWorkerCommand } from "./dns-worker.command.js";
import { keysCommand } from "./keys.command.js";
import { kycCommand, projectRulesCommand, scoringCommand, tldsCommand } from "./scoring.command.js";
import { snapshotCommand } from "./snapshot.command.js";
import { startCommand } from "./start.command.js";
import { zoneCommand } from "./zone.command.js";

/** Every `omniname` subcommand, in the order `omniname help` lists them. */
export const COMMANDS: readonly Command[] = [
  startCommand,
  devnetCommand,
  crawlCommand,
  keysCommand,
  snapshotCommand,
  adminCommand,
  projectRulesCommand,
  scoringCommand,
  kycCommand,
  tldsCommand,
  zoneCommand,
  dnssecCommand,
  dnsWorkerCommand,
];
