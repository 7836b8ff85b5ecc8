import { describe, expect, it } from "vitest";
import { addressRange, checkAddress } from "../net/address-guard.js";
import { checkWebhookUrl } from "./webhook-address.js";

// The SSRF guard as a table. DNS is a fixed table here: the test resolves and connects nowhere.
const DNS: Record<string, string[]> = {
  "hooks.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  "localhost.example": ["127.0.0.1"],
  "intranet.example": ["10.1.2.3"],
  "mixed.example": ["93.184.216.34", "192.168.0.10"],
  "metadata.example": ["169.254.169.254"],
  "v6-ula.example": ["fd00::1"],
  "mapped.example": ["::ffff:10.0.0.1"],
  "empty.example": [],
};
const resolveAll = async (host: string): Promise<string[]> => {
  const found = DNS[host];
  if (found === undefined) throw new Error(`ENOTFOUND ${host}`);
  return found;
};

describe("checkAddress: every non-public range is refused", () => {
  const table: [string, string][] = [
    ["93.184.216.34", "unicast"],
    ["8.8.8.8", "unicast"],
    ["2606:4700:4700::1111", "unicast"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["192.168.1.1", "private"],
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["169.254.169.254", "linkLocal"],
    ["fe80::1", "linkLocal"],
    ["fd12:3456::1", "uniqueLocal"],
    ["fc00::1", "uniqueLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["ff02::1", "multicast"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:169.254.1.1", "linkLocal"],
    ["::ffff:7f00:1", "loopback"],
    ["2002:a00:1::1", "6to4"],
    ["64:ff9b::a00:1", "rfc6052"],
    ["240.0.0.1", "reserved"],
  ];
  it.each(table)("%s is %s", (address, range) => {
    expect(addressRange(address)).toBe(range);
    const refused = !checkAddress(address, { allowLoopback: false }).ok;
    expect(refused).toBe(range !== "unicast");
    const allowed = checkAddress(address, { allowLoopback: true }).ok;
    expect(allowed).toBe(range === "unicast" || range === "loopback");
  });
  it("refuses what is not an address", () => {
    expect(checkAddress("example.com", { allowLoopback: true }).ok).toBe(false);
  });
});

describe("checkWebhookUrl", () => {
  const strict = { allowLoopback: false };
  const embedded = { allowLoopback: true };
  const table: [string, typeof strict, string | null][] = [
    ["https://hooks.example.com/omniname", strict, null],
    ["https://hooks.example.com:8443/x?y=1", strict, null],
    ["https://93.184.216.34/x", strict, null],
    ["http://hooks.example.com/x", strict, "must be https://"],
    ["http://hooks.example.com/x", embedded, "http only to a loopback address"],
    ["ftp://hooks.example.com/x", strict, "must be https://"],
    ["not a url", strict, "not an absolute URL"],
    ["/relative", strict, "not an absolute URL"],
    [`https://hooks.example.com/${"a".repeat(3000)}`, strict, "longer than"],
    ["https://user:pw@hooks.example.com/", strict, "user name or password"],
    ["https://hooks.example.com/#x", strict, "fragment"],
    ["https://127.0.0.1/x", strict, "loopback"],
    ["https://[::1]/x", strict, "loopback"],
    ["https://[::ffff:127.0.0.1]/x", strict, "loopback"],
    ["https://[::ffff:192.168.0.1]/x", strict, "private"],
    ["https://0x7f.1/x", strict, "loopback"],
    ["https://2130706433/x", strict, "loopback"],
    ["https://10.0.0.8/x", strict, "private"],
    ["https://169.254.169.254/latest/meta-data", strict, "linkLocal"],
    ["https://100.100.100.100/", strict, "carrierGradeNat"],
    ["https://[fe80::1]/", strict, "linkLocal"],
    ["https://[fd00::2]/", strict, "uniqueLocal"],
    ["https://0.0.0.0/", strict, "unspecified"],
    ["https://localhost.example/", strict, "loopback"],
    ["https://intranet.example/", strict, "private"],
    ["https://mixed.example/", strict, "private"],
    ["https://metadata.example/", strict, "linkLocal"],
    ["https://v6-ula.example/", strict, "uniqueLocal"],
    ["https://mapped.example/", strict, "private"],
    ["https://empty.example/", strict, "does not resolve"],
    ["https://nowhere.example/", strict, "does not resolve"],
    ["http://127.0.0.1:9/x", strict, "must be https://"],
    ["http://127.0.0.1:9/x", embedded, null],
    ["http://[::1]:9/x", embedded, null],
    ["http://localhost.example:9/x", embedded, null],
    ["https://127.0.0.1:9/x", embedded, null],
    ["http://intranet.example/", embedded, "private"],
  ];
  it.each(table)("%s (%o) → %s", async (raw, policy, refusal) => {
    const verdict = await checkWebhookUrl(raw, policy, resolveAll);
    if (refusal === null) expect(verdict).toMatchObject({ ok: true });
    else {
      expect(verdict.ok).toBe(false);
      expect(verdict.ok ? "" : verdict.reason).toContain(refusal);
    }
  });
});
