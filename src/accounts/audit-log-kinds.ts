// Every kind of change the audit log records: defined once in packages/wire (@omniname/wire), which the console (web/) imports too.
export * from "@omniname/wire/audit-kinds";
