// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {RecordRegistry} from "../common/RecordRegistry.sol";

/// @notice Devnet stand-in for the Unstoppable Domains UNSRegistry: the mainnet event ABI, token
/// id = EIP-137 namehash of the labels (as UTF-8, the name as given), NewURI carrying the name.
contract UNSRegistry is RecordRegistry {
    event Set(uint256 indexed tokenId, string indexed keyIndex, string indexed valueIndex, string key, string value);
    event SetExpiry(uint256 indexed tokenId, uint64 expiry);

    error EmptyName();

    string public constant name = "Unstoppable Domains (devnet)";
    string public constant symbol = "UD";

    mapping(uint256 => uint64) private _expiries;

    /// Labels from left to right: ["alice", "crypto"] is alice.crypto.
    function namehash(string[] memory labels) public pure returns (uint256) {
        bytes32 node;
        for (uint256 i = labels.length; i > 0; i--) {
            node = keccak256(abi.encodePacked(node, keccak256(bytes(labels[i - 1]))));
        }
        return uint256(node);
    }

    /// 0 = the name does not expire.
    function expiryOf(uint256 tokenId) external view returns (uint64) {
        return _expiries[tokenId];
    }

    function mint(address to, string[] calldata labels) external onlyMinter returns (uint256) {
        return _mintLabels(to, labels);
    }

    function mintWithRecords(
        address to,
        string[] calldata labels,
        string[] calldata keys,
        string[] calldata values,
        uint64 expiry
    ) external onlyMinter returns (uint256 tokenId) {
        tokenId = _mintLabels(to, labels);
        if (expiry != 0) _setExpiry(expiry, tokenId);
        _setMany(tokenId, keys, values);
    }

    /// Many names with their records in one transaction (fixtures and benchmark worlds).
    function mintMany(
        address[] calldata to,
        string[][] calldata labels,
        string[][] calldata keys,
        string[][] calldata values,
        uint64[] calldata expiries
    ) external onlyMinter {
        uint256 n = to.length;
        if (labels.length != n || keys.length != n || values.length != n || expiries.length != n) {
            revert LengthMismatch();
        }
        for (uint256 i = 0; i < n; i++) {
            uint256 tokenId = _mintLabels(to[i], labels[i]);
            if (expiries[i] != 0) _setExpiry(expiries[i], tokenId);
            _setMany(tokenId, keys[i], values[i]);
        }
    }

    function setExpiry(uint64 expiry, uint256 tokenId) external onlyMinter {
        ownerOf(tokenId);
        _setExpiry(expiry, tokenId);
    }

    function _setExpiry(uint64 expiry, uint256 tokenId) private {
        _expiries[tokenId] = expiry;
        emit SetExpiry(tokenId, expiry);
    }

    function _mintLabels(address to, string[] calldata labels) private returns (uint256 tokenId) {
        if (labels.length == 0) revert EmptyName();
        string memory uri = labels[0];
        for (uint256 i = 1; i < labels.length; i++) {
            uri = string.concat(uri, ".", labels[i]);
        }
        tokenId = namehash(labels);
        _mint(to, tokenId, uri);
    }

    function _emitRecord(uint256 tokenId, string calldata key, string calldata value) internal override {
        emit Set(tokenId, key, value, key, value);
    }
}
