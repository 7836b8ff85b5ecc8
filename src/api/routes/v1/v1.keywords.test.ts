import { describe, expect, it } from "vitest";
import { queryCheck } from "./v1.keywords.js";
import { HistoryQuery, NameQuery, ReverseQuery } from "./v1.schemas.js";

// The one validation of a v1 query: what a request's query becomes, and how a refusal names its
// parameter (details.parameter), without an HTTP server in between.
const checkName = queryCheck(NameQuery);
const checkAddress = queryCheck(ReverseQuery);

describe("v1 query schemas: validated and canonicalized at once", () => {
  it("trims, drops empty values, reads aliases in any case, booleans and time travel", () => {
    const q: Record<string, unknown> = {
      fullQualifiedDomain: " Alice.wallet ",
      network: "matic",
      provider: " ",
      explain: "Yes",
      at: "2024-05-01T14:00:00+02:00",
    };
    expect(checkName(q)).toBeNull();
    expect(q).toEqual({
      domain: "Alice.wallet",
      network: "POLYGON",
      explain: true,
      at: "2024-05-01T12:00:00.000Z",
    });
  });

  it("writes atBlock with the network's wire value, and an EVM address in lower case", () => {
    const q: Record<string, unknown> = {
      walletAddress: "0XF39FD6E51AAD88F6F4CE6AB8827279CFFFB92266",
      atBlock: "matic:42",
    };
    expect(checkAddress(q)).toBeNull();
    expect(q).toEqual({ walletAddress: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", atBlock: "POLYGON:42" });
  });

  it("names the parameter the caller used for a name that cannot be looked up", () => {
    const refused = checkName({ fullQualifiedDomain: "a..wallet" });
    expect(refused?.code).toBe("INVALID_DOMAIN");
    expect(refused?.details).toEqual({ parameter: "fullQualifiedDomain" });
    expect(refused?.message).toMatch(
      /^The parameter "fullQualifiedDomain" is not a valid domain name: .+\.$/,
    );
  });

  it("refuses a value the pattern refuses, a day that does not exist, and rules over two parameters", () => {
    const network = checkName({ domain: "alice.wallet", network: "MARS" });
    expect([network?.code, network?.details?.parameter]).toEqual(["INVALID_NETWORK", "network"]);
    const day = checkName({ domain: "alice.wallet", at: "2024-02-30" });
    expect([day?.code, day?.details?.parameter]).toEqual(["INVALID_PARAMETER", "at"]);
    const both = queryCheck(HistoryQuery)({ at: "2024-05-01", atBlock: "POLYGON:1" });
    expect(both?.message).toBe('The parameters "at" and "atBlock" exclude each other: give one of them.');
    const other = checkName({ domain: "alice.wallet", network: "BSC", atBlock: "POLYGON:1" });
    expect(other?.message).toMatch(/"atBlock" names POLYGON but "network" is BSC/);
    const missing = checkName({ domain: " " });
    expect([missing?.code, missing?.details?.parameter]).toEqual(["MISSING_PARAMETER", "domain"]);
  });

  it("words a refusal as its caller names things (a batch input, a console field)", () => {
    const refused = checkAddress(
      { walletAddress: "0xZZ" },
      { what: "input", rename: () => "walletAddresses[3]" },
    );
    expect(refused?.message).toMatch(/^The input "walletAddresses\[3\]" must be a wallet address/);
    expect(refused?.details).toEqual({ parameter: "walletAddress" });
  });
});
