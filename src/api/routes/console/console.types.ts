// The console API's types, derived from its schemas: defined in packages/wire (the console imports them).
export type * from "@omniname/wire/console-types";
