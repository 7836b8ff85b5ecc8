import { runRows } from "./helpers/parameter-rows.js";
import { HISTORY_ROWS } from "./helpers/v1-history-rows.js";

runRows("v1 time travel and provenance parameters, with bad values", HISTORY_ROWS);
