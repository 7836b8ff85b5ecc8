// Prints the README configuration table from the config schema: npx tsx scripts/config-table.ts
import { configTable } from "../src/config/config-doc.js";

process.stdout.write(`${configTable()}\n`);
