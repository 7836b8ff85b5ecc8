// `omniname snapshot import FILE` as its own process, for the kill -9 test of the SQLite bulk load
// (snapshot-kill.test.ts): configured by the environment (DATA_DIR).
import { snapshotCommand } from "../../src/cli/snapshot.command.js";

snapshotCommand.run(["import", process.argv[2]]).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`${(e as Error).stack ?? e}\n`);
    process.exitCode = 1;
  },
);
