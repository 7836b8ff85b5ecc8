// The endpoint names a key's scope may list: defined once in packages/wire (@omniname/wire), which the console (web/) imports too.
export * from "@omniname/wire/key-scopes";
