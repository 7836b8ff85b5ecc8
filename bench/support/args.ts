/** A bench script's numeric option `--name <n>`, or `fallback` when it is not given. */
export function numberArg(
  name: string,
  fallback: number,
  argv: readonly string[] = process.argv.slice(2),
): number {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const n = Number(argv[i + 1]);
  if (argv[i + 1] === undefined || !Number.isFinite(n)) throw new Error(`--${name} needs a number`);
  return n;
}
