import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";

/** The writer connection of a SQLite store: WAL, synchronous NORMAL, foreign keys, a 5 s busy timeout. */
export function openWriter(file: string): BetterSqlite3.Database {
  mkdirSync(dirname(file), { recursive: true });
  const db = new BetterSqlite3(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  return db;
}
