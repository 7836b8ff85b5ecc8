// The networks of the spec (wire values, aliases, chain ids): defined once in packages/wire (@omniname/wire), which the console (web/) imports too.
export * from "@omniname/wire/networks";
