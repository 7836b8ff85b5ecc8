// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Minted} from "./Minted.sol";

/// @notice FNS's (Freename's) ERC-721 with records, under the function names and selectors of
/// Freename's published registry ABI (`FNS_ABI` of the `web3-domain-resolver` SDK), so that
/// Freename's own clients read and write the devnet: `getRecord`, `getManyRecords`, `getAllKeys`,
/// `setRecord`, `setManyRecords`, `reconfigure`, `reset`, `setReverse(tokenId)`, `removeReverse()`,
/// `tokenURI`, `isApprovedOrOwner`. Records live in presets (a reset switches the token to a fresh
/// preset, as UNS does), a global key table emits NewKey the first time a key is seen, and each
/// address has one reverse token. The record event is left to the child (`SetRecord` for FNS).
abstract contract RecordRegistry is Minted {
    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId);
    event ApprovalForAll(address indexed owner, address indexed operator, bool approved);
    event NewURI(uint256 indexed tokenId, string uri);
    event NewKey(uint256 indexed tokenId, string indexed keyIndex, string key);
    event ResetRecords(uint256 indexed tokenId);
    event SetReverse(address indexed addr, uint256 indexed tokenId);
    event RemoveReverse(address indexed addr);

    error ZeroAddress();
    error AlreadyMinted(uint256 tokenId);
    error NotMinted(uint256 tokenId);
    error WrongOwner(uint256 tokenId, address expected);
    error LengthMismatch();

    mapping(uint256 => address) private _owners;
    mapping(address => uint256) private _balances;
    mapping(uint256 => address) private _tokenApprovals;
    mapping(address => mapping(address => bool)) private _operatorApprovals;
    mapping(uint256 => string) private _keys;
    mapping(uint256 => uint256) private _presets;
    mapping(uint256 => mapping(uint256 => string)) private _records;
    // getAllKeys: the keys ever set in a preset, in first-set order (a key set to "" stays listed).
    mapping(uint256 => string[]) private _presetKeys;
    mapping(uint256 => mapping(uint256 => bool)) private _presetHasKey;
    mapping(address => uint256) private _reverses;

    /// Emits the protocol's record event (FNS `SetRecord`).
    function _emitRecord(uint256 tokenId, string calldata key, string calldata value) internal virtual;

    // ---- ERC-721 views ----

    function ownerOf(uint256 tokenId) public view returns (address owner) {
        owner = _owners[tokenId];
        if (owner == address(0)) revert NotMinted(tokenId);
    }

    function exists(uint256 tokenId) external view returns (bool) {
        return _owners[tokenId] != address(0);
    }

    function balanceOf(address owner) external view returns (uint256) {
        return _balances[owner];
    }

    function getApproved(uint256 tokenId) external view returns (address) {
        return _tokenApprovals[tokenId];
    }

    function isApprovedForAll(address owner, address operator) external view returns (bool) {
        return _operatorApprovals[owner][operator];
    }

    function isApprovedOrOwner(address spender, uint256 tokenId) external view returns (bool) {
        address owner = ownerOf(tokenId);
        return spender == owner || _tokenApprovals[tokenId] == spender || _operatorApprovals[owner][spender];
    }

    /// ERC-721's default without a base URI: "" (the SDK then asks no metadata server).
    function tokenURI(uint256 tokenId) external view returns (string memory) {
        ownerOf(tokenId);
        return "";
    }

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        // ERC-165, ERC-721, ERC-721 metadata.
        return interfaceId == 0x01ffc9a7 || interfaceId == 0x80ac58cd || interfaceId == 0x5b5e139f;
    }

    // ---- record views ----

    function getRecord(string calldata key, uint256 tokenId) public view returns (string memory) {
        return _records[_presetOf(tokenId)][uint256(keccak256(bytes(key)))];
    }

    function getManyRecords(string[] calldata keys, uint256 tokenId) public view returns (string[] memory values) {
        values = new string[](keys.length);
        uint256 preset = _presetOf(tokenId);
        for (uint256 i = 0; i < keys.length; i++) {
            values[i] = _records[preset][uint256(keccak256(bytes(keys[i])))];
        }
    }

    function getAllKeys(uint256 tokenId) external view returns (string[] memory) {
        return _presetKeys[_presetOf(tokenId)];
    }

    function getKey(uint256 keyHash) external view returns (string memory) {
        return _keys[keyHash];
    }

    function getKeys(uint256[] calldata hashes) external view returns (string[] memory values) {
        values = new string[](hashes.length);
        for (uint256 i = 0; i < hashes.length; i++) {
            values[i] = _keys[hashes[i]];
        }
    }

    function reverseOf(address addr) external view returns (uint256) {
        return _reverses[addr];
    }

    // ---- ERC-721 writes ----

    function approve(address to, uint256 tokenId) external {
        _requireAuthorized(tokenId);
        _tokenApprovals[tokenId] = to;
        emit Approval(ownerOf(tokenId), to, tokenId);
    }

    function setApprovalForAll(address operator, bool approved) external {
        _operatorApprovals[msg.sender][operator] = approved;
        emit ApprovalForAll(msg.sender, operator, approved);
    }

    function transferFrom(address from, address to, uint256 tokenId) public {
        _requireAuthorized(tokenId);
        if (ownerOf(tokenId) != from) revert WrongOwner(tokenId, from);
        _transfer(from, to, tokenId);
    }

    /// No ERC721Receiver check: devnet wallets are plain accounts.
    function safeTransferFrom(address from, address to, uint256 tokenId) external {
        transferFrom(from, to, tokenId);
    }

    function setOwner(address to, uint256 tokenId) external {
        transferFrom(ownerOf(tokenId), to, tokenId);
    }

    /// Burning wipes the records too, as UNS does.
    function burn(uint256 tokenId) external {
        _requireAuthorized(tokenId);
        address owner = ownerOf(tokenId);
        _reset(tokenId);
        _dropReverse(owner, tokenId);
        delete _tokenApprovals[tokenId];
        delete _owners[tokenId];
        _balances[owner] -= 1;
        emit Transfer(owner, address(0), tokenId);
    }

    // ---- record writes ----

    function setRecord(string calldata key, string calldata value, uint256 tokenId) public {
        _requireAuthorized(tokenId);
        _set(tokenId, key, value);
    }

    function setManyRecords(string[] calldata keys, string[] calldata values, uint256 tokenId) external {
        _requireAuthorized(tokenId);
        _setMany(tokenId, keys, values);
    }

    function reconfigure(string[] calldata keys, string[] calldata values, uint256 tokenId) external {
        _requireAuthorized(tokenId);
        _reset(tokenId);
        _setMany(tokenId, keys, values);
    }

    function reset(uint256 tokenId) external {
        _requireAuthorized(tokenId);
        _reset(tokenId);
    }

    // ---- reverse records: the caller's own, as on mainnet ----

    function setReverse(uint256 tokenId) external {
        if (ownerOf(tokenId) != msg.sender) revert WrongOwner(tokenId, msg.sender);
        _reverses[msg.sender] = tokenId;
        emit SetReverse(msg.sender, tokenId);
    }

    function removeReverse() external {
        if (_reverses[msg.sender] == 0) return;
        delete _reverses[msg.sender];
        emit RemoveReverse(msg.sender);
    }

    // ---- internals ----

    function _mint(address to, uint256 tokenId, string memory uri) internal {
        if (to == address(0)) revert ZeroAddress();
        if (_owners[tokenId] != address(0)) revert AlreadyMinted(tokenId);
        _owners[tokenId] = to;
        _balances[to] += 1;
        emit Transfer(address(0), to, tokenId);
        emit NewURI(tokenId, uri);
    }

    function _transfer(address from, address to, uint256 tokenId) internal {
        if (to == address(0)) revert ZeroAddress();
        delete _tokenApprovals[tokenId];
        // A reverse record may only name a token its address owns (UNS rule).
        _dropReverse(from, tokenId);
        _balances[from] -= 1;
        _balances[to] += 1;
        _owners[tokenId] = to;
        emit Transfer(from, to, tokenId);
    }

    function _dropReverse(address owner, uint256 tokenId) private {
        if (_reverses[owner] == tokenId) {
            delete _reverses[owner];
            emit RemoveReverse(owner);
        }
    }

    function _set(uint256 tokenId, string calldata key, string calldata value) internal {
        uint256 keyHash = uint256(keccak256(bytes(key)));
        if (bytes(_keys[keyHash]).length == 0) {
            _keys[keyHash] = key;
            emit NewKey(tokenId, key, key);
        }
        uint256 preset = _presetOf(tokenId);
        if (!_presetHasKey[preset][keyHash]) {
            _presetHasKey[preset][keyHash] = true;
            _presetKeys[preset].push(key);
        }
        _records[preset][keyHash] = value;
        _emitRecord(tokenId, key, value);
    }

    function _setMany(uint256 tokenId, string[] calldata keys, string[] calldata values) internal {
        if (keys.length != values.length) revert LengthMismatch();
        for (uint256 i = 0; i < keys.length; i++) {
            _set(tokenId, keys[i], values[i]);
        }
    }

    function _reset(uint256 tokenId) internal {
        _presets[tokenId] = uint256(keccak256(abi.encodePacked(_presetOf(tokenId))));
        emit ResetRecords(tokenId);
    }

    function _presetOf(uint256 tokenId) private view returns (uint256) {
        uint256 preset = _presets[tokenId];
        return preset == 0 ? tokenId : preset;
    }

    function _requireAuthorized(uint256 tokenId) internal view {
        address owner = ownerOf(tokenId);
        if (
            msg.sender != owner && !_isMinter(msg.sender) && _tokenApprovals[tokenId] != msg.sender
                && !_operatorApprovals[owner][msg.sender]
        ) revert Unauthorized(msg.sender);
    }
}
