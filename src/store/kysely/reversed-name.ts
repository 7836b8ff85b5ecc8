/**
 * A name's labels in reverse order: the key of `domains.rname`, under which every name below a
 * name is one contiguous range.
 *
 * @example reverseLabels("a.b.wallet") // "wallet.b.a"
 */
export function reverseLabels(name: string): string {
  return name.split(".").reverse().join(".");
}

/**
 * The `rname` range of the names strictly below `name`: from `"<rname>."` (exclusive) up to
 * `"<rname>/"` (exclusive; "/" is the code point after ".").
 *
 * @example descendantRange("b.wallet") // { above: "wallet.b.", below: "wallet.b/" }
 */
export function descendantRange(name: string): { above: string; below: string } {
  const r = reverseLabels(name);
  return { above: `${r}.`, below: `${r}/` };
}
