// The console API's request schemas: defined in packages/wire, whose types the console (web/) imports.
export * from "@omniname/wire/console-schemas";
