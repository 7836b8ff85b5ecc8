import type { Kysely } from "kysely";
import * as m0001 from "./migrations/0001-foundation.js";
import * as m0002 from "./migrations/0002-crawler.js";
import * as m0003 from "./migrations/0003-accounts.js";
import * as m0004 from "./migrations/0004-scoring.js";
import * as m0005 from "./migrations/0005-reversed-names.js";
import * as m0006 from "./migrations/0006-source-leases.js";
import * as m0007 from "./migrations/0007-source-progress.js";
import * as m0009 from "./migrations/0009-name-index.js";
import * as m0010 from "./migrations/0010-tld-registrations.js";
import * as m0011 from "./migrations/0011-journal-indexes.js";
import * as m0012 from "./migrations/0012-journal-history.js";
import * as m0013 from "./migrations/0013-change-events.js";
import * as m0014 from "./migrations/0014-incremental-rescore.js";
import * as m0015 from "./migrations/0015-usage-alerts.js";
import * as m0016 from "./migrations/0016-two-factor.js";
import * as m0017 from "./migrations/0017-webhooks.js";
import * as m0018 from "./migrations/0018-audit-log.js";
import * as m0019 from "./migrations/0019-key-scopes.js";
import * as m0021 from "./migrations/0021-derived-upkeep.js";
import * as m0022 from "./migrations/0022-settings-winner-jobs.js";
import * as m0026 from "./migrations/0026-settings-winner-job-retries.js";
import * as m0027 from "./migrations/0027-records-native-dropped.js";
import * as m0028 from "./migrations/0028-journal-token-suffix.js";
import * as m0029 from "./migrations/0029-journal-source-position.js";
import * as m0030 from "./migrations/0030-dns-zone-serial.js";
import * as m0031 from "./migrations/0031-ens-live-answers.js";
import type { Dialect } from "./store.js";

interface Migration {
  name: string;
  up(db: Kysely<unknown>, dialect: Dialect): Promise<void>;
}

/**
 * Every migration, in order. Append only: a released migration is never edited. Each feature adds
 * its own file under migrations/ and one line here.
 */
export const MIGRATIONS: readonly Migration[] = [
  { name: "0001-foundation", up: m0001.up },
  { name: "0002-crawler", up: m0002.up },
  { name: "0003-accounts", up: m0003.up },
  { name: "0004-scoring", up: m0004.up },
  { name: "0005-reversed-names", up: m0005.up },
  { name: "0006-source-leases", up: m0006.up },
  { name: "0007-source-progress", up: m0007.up },
  { name: "0010-tld-registrations", up: m0010.up },
  { name: "0009-name-index", up: m0009.up },
  { name: "0011-journal-indexes", up: m0011.up },
  { name: "0012-journal-history", up: m0012.up },
  { name: "0013-change-events", up: m0013.up },
  { name: "0014-incremental-rescore", up: m0014.up },
  { name: "0015-usage-alerts", up: m0015.up },
  { name: "0016-two-factor", up: m0016.up },
  { name: "0017-webhooks", up: m0017.up },
  { name: "0018-audit-log", up: m0018.up },
  { name: "0019-key-scopes", up: m0019.up },
  { name: "0021-derived-upkeep", up: m0021.up },
  { name: "0022-settings-winner-jobs", up: m0022.up },
  { name: "0026-settings-winner-job-retries", up: m0026.up },
  { name: "0027-records-native-dropped", up: m0027.up },
  { name: "0028-journal-token-suffix", up: m0028.up },
  { name: "0029-journal-source-position", up: m0029.up },
  { name: "0030-dns-zone-serial", up: m0030.up },
  { name: "0031-ens-live-answers", up: m0031.up },
];
