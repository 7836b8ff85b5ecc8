import { runRows } from "./helpers/parameter-rows.js";
import { PARAMETER_ROWS } from "./helpers/v1-parameter-rows.js";

runRows("v1 parameters: every parameter of every route, with bad values", PARAMETER_ROWS);
