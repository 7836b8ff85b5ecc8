import { describe, expect, it } from "vitest";
import { asksForHelp, helpOf } from "./command.js";
import { COMMANDS } from "./commands.js";

describe("asksForHelp", () => {
  it.each([
    ["after the command", ["--help"], true],
    ["short form", ["-h"], true],
    ["after a subcommand", ["simulate", "--help"], true],
    ["after other options", ["create", "--project", "demo", "--help"], true],
    ["after --, an argument", ["--", "--help"], false],
    ["no flag", ["simulate", "--rate", "5"], false],
    ["a value that only contains it", ["--name", "--helpful"], false],
  ])("%s", (_label, argv, expected) => {
    expect(asksForHelp(argv as string[])).toBe(expected);
  });
});

describe("every command answers --help", () => {
  it.each(COMMANDS.map((c) => [c.name, c] as const))(
    "%s: a usage that names the command",
    (name, command) => {
      const help = helpOf(command);
      expect(help.startsWith("usage:")).toBe(true);
      expect(help).toContain(`omniname ${name}`);
      expect(help.endsWith("\n")).toBe(true);
    },
  );

  it("names each subcommand of the commands that have some", () => {
    const help = (n: string) => helpOf(COMMANDS.find((c) => c.name === n)!);
    expect(help("devnet")).toContain("omniname devnet simulate");
    expect(help("keys")).toMatch(/keys create[\s\S]*keys list[\s\S]*keys revoke/);
    expect(help("admin")).toMatch(/invite[\s\S]*plan/);
    expect(help("dnssec")).toMatch(/ds[\s\S]*anchors[\s\S]*add-key[\s\S]*retire/);
  });
});
