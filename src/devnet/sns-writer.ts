import type { Address } from "@solana/kit";
import {
  addressBytes,
  decodeNameRegistry,
  decodeTokenAccount,
  domainKeyOf,
  encodeMint,
  encodeNameRegistry,
  encodeNftRecord,
  encodePrimary,
  encodeRecordV2,
  encodeReverse,
  encodeTokenAccount,
  findPda,
  nftRecordOf,
  primaryKeyOf,
  RECORDS_V2_CLASS,
  recordV1KeyOf,
  recordV2KeyOf,
  reverseKeyOf,
  SNS_PROGRAMS,
  tokenizedMintOf,
} from "../providers/sns/sns-program.js";
import type { SolanaLedger } from "./solana-ledger.js";

type Change = { address: Address; owner: Address; data: Uint8Array | null };

const ATA_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL" as Address;
/** The associated token account of `wallet` for `mint` (the ATA program's PDA). */
export const ataOf = (wallet: Address, mint: Address) =>
  findPda([addressBytes(wallet), addressBytes(SNS_PROGRAMS.splToken), addressBytes(mint)], ATA_PROGRAM);

/**
 * Writes the Solana Name Service's accounts into the devnet's ledger in the programs' exact layouts
 * (name registry header + data, reverse lookups, Records V1 and V2, primary domains, the
 * tokenizer's NFT record, mint and token account): what the SNS programs' instructions would leave
 * behind, since no SNS program binary is available to run (docs/sns.md). Each call is one slot.
 *
 * @example const sns = createSnsWriter(ledger); sns.register("alice.sol", owner);
 */
export function createSnsWriter(ledger: SolanaLedger) {
  const keyOf = (name: string): Address => {
    const k = domainKeyOf(name);
    if (!k) throw new Error(`not an SNS name: ${name}`);
    return k;
  };
  const registryOf = (key: Address) => {
    const a = ledger.get(key);
    if (!a) throw new Error(`no name account ${key}`);
    const r = decodeNameRegistry(a.data);
    if ("error" in r) throw new Error(r.error);
    return r;
  };
  /** The owner as the SDK sees it: the mint's holder for a tokenized name, else the registry owner. */
  const ownerOf = (name: string): Address => {
    const key = keyOf(name);
    const mint = tokenizedMintOf(key);
    if (ledger.get(mint))
      for (const a of ledger.programAccounts(SNS_PROGRAMS.splToken)) {
        const t = decodeTokenAccount(a.data);
        if (t && t.mint === mint && t.amount === 1n) return t.owner;
      }
    return registryOf(key).owner;
  };
  /** The name account `key` with its header's owner replaced. */
  const withOwner = (key: Address, owner: Address): Change => {
    const r = registryOf(key);
    return {
      address: key,
      owner: SNS_PROGRAMS.nameService,
      data: encodeNameRegistry({ parent: r.parent, owner, nameClass: r.nameClass }, r.data),
    };
  };
  const nameAccount = (
    key: Address,
    parent: Address,
    owner: Address,
    data: Uint8Array = new Uint8Array(0),
  ): Change => ({
    address: key,
    owner: SNS_PROGRAMS.nameService,
    data: encodeNameRegistry({ parent, owner, nameClass: null }, data),
  });
  const reverseAccount = (key: Address, parent: Address | null, label: string): Change => ({
    address: reverseKeyOf(key, parent),
    owner: SNS_PROGRAMS.nameService,
    data: encodeNameRegistry(
      { parent, owner: SNS_PROGRAMS.reverseClass, nameClass: SNS_PROGRAMS.reverseClass },
      encodeReverse(label),
    ),
  });
  return {
    keyOf,
    ownerOf,
    /** Registers `alice.sol` (under the root) or `sub.alice.sol` (under its parent): name + reverse accounts. */
    register(name: string, owner: Address): number {
      const labels = name.replace(/\.sol$/, "").split(".");
      const key = keyOf(name);
      if (labels.length === 1)
        return ledger.write([
          nameAccount(key, SNS_PROGRAMS.solRoot, owner),
          reverseAccount(key, null, labels[0]),
        ]);
      const parent = keyOf(labels[1]);
      return ledger.write([nameAccount(key, parent, owner), reverseAccount(key, parent, `\0${labels[0]}`)]);
    },
    /** Many second-level names in one slot (bulk seeding, the bench). */
    registerMany(names: ReadonlyArray<{ name: string; owner: Address }>): number {
      const changes: Change[] = [];
      for (const n of names) {
        const key = keyOf(n.name);
        changes.push(
          nameAccount(key, SNS_PROGRAMS.solRoot, n.owner),
          reverseAccount(key, null, n.name.replace(/\.sol$/, "")),
        );
      }
      return ledger.write(changes);
    },
    /** The registry owner changes (the name service's Transfer instruction). */
    transfer(name: string, to: Address): number {
      return ledger.write([withOwner(keyOf(name), to)]);
    },
    /** Deletes the name account and its reverse (the name service's Delete instruction). */
    remove(name: string): number {
      const key = keyOf(name);
      const r = registryOf(key);
      const parent = r.parent === SNS_PROGRAMS.solRoot ? null : r.parent;
      return ledger.write([
        { address: key, owner: SNS_PROGRAMS.nameService, data: null },
        { address: reverseKeyOf(key, parent), owner: SNS_PROGRAMS.nameService, data: null },
      ]);
    },
    /**
     * A Records V2 record: staleness id = the current owner (validated by Solana signature, as the
     * records program's `validateSolanaSignature` leaves it), or `stale` signed by someone else.
     */
    setRecordV2(
      name: string,
      record: string,
      content: Uint8Array,
      opts: { stalenessId?: Address } = {},
    ): number {
      const key = keyOf(name);
      const owner = ownerOf(name);
      return ledger.write([
        {
          address: recordV2KeyOf(key, record),
          owner: SNS_PROGRAMS.nameService,
          data: encodeNameRegistry(
            { parent: key, owner, nameClass: RECORDS_V2_CLASS },
            encodeRecordV2({ staleness: opts.stalenessId ?? owner, content }),
          ),
        },
      ]);
    },
    deleteRecordV2(name: string, record: string): number {
      return ledger.write([
        { address: recordV2KeyOf(keyOf(name), record), owner: SNS_PROGRAMS.nameService, data: null },
      ]);
    },
    /** A V1 record: a name account "\x01" + record under the domain, its data the raw content. */
    setRecordV1(name: string, record: string, content: Uint8Array): number {
      const key = keyOf(name);
      return ledger.write([nameAccount(recordV1KeyOf(key, record), key, ownerOf(name), content)]);
    },
    /** The wallet's primary ("favourite") domain, written by the name offers program. */
    setPrimary(wallet: Address, name: string): number {
      return ledger.write([
        { address: primaryKeyOf(wallet), owner: SNS_PROGRAMS.nameOffers, data: encodePrimary(keyOf(name)) },
      ]);
    },
    /**
     * Tokenizes a name: the tokenizer's NFT record becomes the registry owner, a mint of supply 1
     * and `holder`'s token account holding it. The holder is then the owner (the SDK's rule).
     */
    tokenize(name: string, holder: Address): number {
      const key = keyOf(name);
      const r = registryOf(key);
      const mint = tokenizedMintOf(key);
      const nftRecord = nftRecordOf(key);
      return ledger.write([
        withOwner(key, nftRecord),
        {
          address: nftRecord,
          owner: SNS_PROGRAMS.tokenizer,
          data: encodeNftRecord({ domain: key, owner: r.owner, mint }),
        },
        { address: mint, owner: SNS_PROGRAMS.splToken, data: encodeMint(1n) },
        {
          address: ataOf(holder, mint),
          owner: SNS_PROGRAMS.splToken,
          data: encodeTokenAccount({ mint, owner: holder, amount: 1n }),
        },
      ]);
    },
    /** Moves a tokenized name's NFT from `from` to `to` (an SPL token transfer). */
    transferNft(name: string, from: Address, to: Address): number {
      const mint = tokenizedMintOf(keyOf(name));
      return ledger.write([
        {
          address: ataOf(from, mint),
          owner: SNS_PROGRAMS.splToken,
          data: encodeTokenAccount({ mint, owner: from, amount: 0n }),
        },
        {
          address: ataOf(to, mint),
          owner: SNS_PROGRAMS.splToken,
          data: encodeTokenAccount({ mint, owner: to, amount: 1n }),
        },
      ]);
    },
    /**
     * Redeems a tokenized name (the tokenizer's `redeem_nft`): `holder`'s NFT is burnt (amount and
     * supply 0), the NFT record becomes inactive (tag 3) and the registry owner the holder again.
     */
    untokenize(name: string, holder: Address): number {
      const key = keyOf(name);
      const mint = tokenizedMintOf(key);
      const nftRecord = nftRecordOf(key);
      const record = encodeNftRecord({ domain: key, owner: holder, mint });
      record[0] = 3;
      return ledger.write([
        withOwner(key, holder),
        { address: nftRecord, owner: SNS_PROGRAMS.tokenizer, data: record },
        { address: mint, owner: SNS_PROGRAMS.splToken, data: encodeMint(0n) },
        {
          address: ataOf(holder, mint),
          owner: SNS_PROGRAMS.splToken,
          data: encodeTokenAccount({ mint, owner: holder, amount: 0n }),
        },
      ]);
    },
    /** Writes raw accounts (hostile input in tests: short data, unknown class, invalid UTF-8). */
    writeRaw(changes: Change[]): number {
      return ledger.write(changes);
    },
  };
}

export type SnsWriter = ReturnType<typeof createSnsWriter>;
