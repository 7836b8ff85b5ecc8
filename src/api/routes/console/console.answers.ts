// The console API's answer schemas: defined in packages/wire, whose types the console (web/) imports.
export * from "@omniname/wire/console-answers";
