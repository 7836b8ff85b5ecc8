// Roles and the fixed permission set of each (docs/permissions.md): defined once in packages/wire (@omniname/wire), which the console (web/) imports too.
export * from "@omniname/wire/permissions";
