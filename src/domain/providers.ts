// The naming providers (wire values, aliases, protocols): defined once in packages/wire (@omniname/wire), which the console (web/) imports too.
export * from "@omniname/wire/providers";
