// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {RecordRegistry} from "../common/RecordRegistry.sol";

/// @notice Devnet stand-in for the Freename FNS registry: the mainnet event ABI (record event
/// `SetRecord`, not UNS's `Set`) and Freename's function ABI (`FNS_ABI` of the
/// `web3-domain-resolver` SDK: the same selectors), with the Freename token ids, which are not a
/// namehash:
///   TLD: uint256(keccak256(bytes(tld)))
///   SLD: uint256(keccak256(abi.encodePacked(bytes(tld), uint256(keccak256(bytes(sld))))))
/// Labels are the punycode ASCII form; `sld` is everything left of the TLD. The minter mints as
/// Freename's minting manager does: `mint(to, tokenId, uri)` / `mintWithRecords(…)`, `uri` being
/// the name (NewURI), the token id computed by the caller (`tokenIdOf`).
contract FNSRegistry is RecordRegistry {
    event SetRecord(
        uint256 indexed tokenId, string indexed keyIndex, string indexed valueIndex, string key, string value
    );

    string public constant name = "Freename Web3 Domains (devnet)";
    string public constant symbol = "FNS";

    function tokenIdOf(string memory sld, string memory tld) public pure returns (uint256) {
        if (bytes(sld).length == 0) return uint256(keccak256(bytes(tld)));
        return uint256(keccak256(abi.encodePacked(bytes(tld), uint256(keccak256(bytes(sld))))));
    }

    // ---- Freename's mint entry points ----

    function mint(address to, uint256 tokenId, string calldata uri) external onlyMinter {
        _mint(to, tokenId, uri);
    }

    function mintWithRecords(
        address to,
        uint256 tokenId,
        string calldata uri,
        string[] calldata keys,
        string[] calldata values
    ) external onlyMinter {
        _mint(to, tokenId, uri);
        _setMany(tokenId, keys, values);
    }

    /// Many names with their records in one transaction (benchmark worlds; devnet only).
    function mintMany(
        address[] calldata to,
        string[] calldata slds,
        string[] calldata tlds,
        string[][] calldata keys,
        string[][] calldata values
    ) external onlyMinter {
        uint256 n = to.length;
        if (slds.length != n || tlds.length != n || keys.length != n || values.length != n) revert LengthMismatch();
        for (uint256 i = 0; i < n; i++) {
            uint256 tokenId = _mintName(to[i], slds[i], tlds[i]);
            _setMany(tokenId, keys[i], values[i]);
        }
    }

    // ---- devnet-only shorthands, kept for the suites written before the real ABI (test/api,
    // test/crawler, test/scale-out, bench): other selectors than Freename's, so no Freename client
    // is confused by them. New code uses the Freename functions above.

    /// `mint(to, tokenId, uri)` with the token id and URI derived here; an empty `sld` mints the TLD.
    function mint(address to, string calldata sld, string calldata tld) external onlyMinter returns (uint256) {
        return _mintName(to, sld, tld);
    }

    function mintWithRecords(
        address to,
        string calldata sld,
        string calldata tld,
        string[] calldata keys,
        string[] calldata values
    ) external onlyMinter returns (uint256 tokenId) {
        tokenId = _mintName(to, sld, tld);
        _setMany(tokenId, keys, values);
    }

    /// = setRecord
    function set(string calldata key, string calldata value, uint256 tokenId) external {
        setRecord(key, value, tokenId);
    }

    /// = getManyRecords
    function getMany(string[] calldata keys, uint256 tokenId) external view returns (string[] memory) {
        return getManyRecords(keys, tokenId);
    }

    function _mintName(address to, string calldata sld, string calldata tld) private returns (uint256 tokenId) {
        tokenId = tokenIdOf(sld, tld);
        _mint(to, tokenId, bytes(sld).length == 0 ? tld : string.concat(sld, ".", tld));
    }

    function _emitRecord(uint256 tokenId, string calldata key, string calldata value) internal override {
        emit SetRecord(tokenId, key, value, key, value);
    }
}
