import type { Command } from "./command.js";
import { snapshotCommand } from "./snapshot.command.js";

/** Every `omniname` subcommand, in the order `omniname help` lists them. */
export const COMMANDS: readonly Command[] = [snapshotCommand];
