import { toEventSelector } from "viem";
import { describe, expect, it } from "vitest";
import { ENS_SIGNATURES as S, ENS_TOPICS } from "./ens-topics.js";

describe("ENS event topics", () => {
  // Values copied from docs/chain-facts.md (TransferBatch: the standard ERC-1155 event); the real
  // ENS artifacts' ABIs are checked in ens-real-abi.test.ts; each must also be
  // keccak256 of its exact signature.
  const CHAIN_FACTS: Record<keyof typeof ENS_TOPICS, string> = {
    NewOwner: "0xce0457fe73731f824cc272376169235128c118b49d344817417c6d108d155e82",
    RegistryTransfer: "0xd4735d920b0f87494915f556dd9b54c8f309026070caea5c737245152564d266",
    NewResolver: "0x335721b01866dc23fbee8b6b2c7b1e14d6f05c28cd35a2c934239f94095602a0",
    BaseNameRegistered: "0xb3d987963d01b2f68493b4bdb130988f157ea43070d4ad840fee0466ed9370d9",
    BaseNameRenewed: "0x9b87a00e30f1ac65d898f070f8a3488fe60517182d0a2098e1b4b93a54aa9bd6",
    NameMigrated: "0xea3d7e1195a15d2ddcd859b01abd4c6b960fa9f9264e499a70a90c7f0c64b717",
    Erc721Transfer: "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
    LegacyNameRegistered: "0xca6abbe9d7f11422cb6ca7629fbf6fe9efb1c621f71ce8f02b9f2a230097404f",
    WrappedNameRegistered: "0x69e37f151eb98a09618ddaa80c8cfaf1ce5996867c489f45b555b412271ebf27",
    UnwrappedNameRegistered: "0xc2240194853531f1ae318dcef227de79c6ad0fd9d1b0e4fe08568415be2e08a5",
    ControllerNameRenewed: "0x3da24c024582931cfaf8267d8ed24d13a82a8068d5bd337d30ec45cea4e506ae",
    UnwrappedNameRenewed: "0xfa956c3bce4cb4b01166868ecaf0620566bc7e33fc70b0b9c6aef61e37e50b94",
    NameWrapped: "0x8ce7013e8abebc55c3890a68f5a27c67c3f7efa64e584de5fb22363c606fd340",
    NameUnwrapped: "0xee2ba1195c65bcf218a83d874335c6bf9d9067b4c672f3c3bf16cf40de7586c4",
    FusesSet: "0x39873f00c80f4f94b7bd1594aebcf650f003545b74824d57ddf4939e3ff3a34b",
    ExpiryExtended: "0xf675815a0817338f93a7da433f6bd5f5542f1029b11b455191ac96c7f6a9b132",
    TransferSingle: "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62",
    TransferBatch: "0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb",
    ReverseClaimed: "0x6ada868dd3058cf77a48a74489fd7963688e5464b2b0fa957ace976243270e92",
    NameForAddrChanged: "0x8af7a4c7007a33f680904f3b64733396b730fef22d79555dee29801ca2e479a9",
    AddrChanged: "0x52d7d861f09ab3d26239d492e8968629f95e9e318cf0b73bfddc441522a15fd2",
    AddressChanged: "0x65412581168e88a1e60c6459d7f44ae83ad0832e670826c05a4e2476b57af752",
    TextChanged: "0x448bc014f1536726cf8d54ff3d6481ed3cbc683c2591ca204274009afa09b1a1",
    LegacyTextChanged: "0xd8c9334b1a9c2f9da342a0a2b32629c1a229b6445dad78947f674b44444a7550",
    ContenthashChanged: "0xe379c1624ed7e714cc0937528a32359d69d5281337765313dba4e081b72d7578",
    NameChanged: "0xb7d29e911041e8d9b843369e890bcb72c9388692ba48b65ac54e7214c4c348f7",
    VersionChanged: "0xc6621ccb8f3f5a04bb6502154b2caf6adf5983fe76dfef1cfc9c42e3579db444",
    DNSRecordChanged: "0x52a608b3303a48862d07a73d82fa221318c0027fbbcfb1b2329bface3f19ff2b",
    DNSRecordDeleted: "0x03528ed0c2a3ebc993b12ce3c16bb382f9c7d88ef7d8a1bf290eaf35955a1207",
  };
  it.each(Object.keys(CHAIN_FACTS) as Array<keyof typeof ENS_TOPICS>)("%s", (name) => {
    expect(ENS_TOPICS[name]).toBe(CHAIN_FACTS[name]);
    expect(toEventSelector(S[name])).toBe(CHAIN_FACTS[name]);
  });
});
