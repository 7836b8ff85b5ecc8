// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Minted} from "../common/Minted.sol";
import {ENSRegistry} from "./ENSRegistry.sol";

/// @notice Devnet stand-in for the .eth BaseRegistrarImplementation: an ERC-721 over labelhashes
/// that owns the `eth` node in the registry. Unlike mainnet, `register` takes the absolute expiry
/// (the seeder replays historical timestamps) and accepts an expiry in the past, so that expired
/// names can be seeded; `ownerOf` answers for expired names too (the exactness checks need it).
contract BaseRegistrar is Minted {
    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId);
    event ApprovalForAll(address indexed owner, address indexed operator, bool approved);
    event NameRegistered(uint256 indexed id, address indexed owner, uint256 expires);
    event NameRenewed(uint256 indexed id, uint256 expires);

    error NotAvailable(uint256 id);
    error NotRegistered(uint256 id);
    error WrongOwner(uint256 id, address expected);
    error ZeroAddress();

    uint256 public constant GRACE_PERIOD = 90 days;
    ENSRegistry public immutable ens;
    bytes32 public immutable baseNode;

    mapping(uint256 => uint256) private _expiries;
    mapping(uint256 => address) private _owners;
    mapping(address => uint256) private _balances;
    mapping(uint256 => address) private _tokenApprovals;
    mapping(address => mapping(address => bool)) private _operatorApprovals;

    constructor(ENSRegistry ens_, bytes32 baseNode_) {
        ens = ens_;
        baseNode = baseNode_;
    }

    function nameExpires(uint256 id) external view returns (uint256) {
        return _expiries[id];
    }

    function available(uint256 id) public view returns (bool) {
        return _expiries[id] + GRACE_PERIOD < block.timestamp;
    }

    function ownerOf(uint256 id) public view returns (address owner) {
        owner = _owners[id];
        if (owner == address(0)) revert NotRegistered(id);
    }

    function balanceOf(address owner) external view returns (uint256) {
        return _balances[owner];
    }

    function register(uint256 id, address owner, uint256 expires) external onlyMinter returns (uint256) {
        if (owner == address(0)) revert ZeroAddress();
        if (_owners[id] != address(0)) {
            if (!available(id)) revert NotAvailable(id);
            _move(_owners[id], address(0), id);
        }
        _expiries[id] = expires;
        _move(address(0), owner, id);
        ens.setSubnodeOwner(baseNode, bytes32(id), owner);
        emit NameRegistered(id, owner, expires);
        return expires;
    }

    function renew(uint256 id, uint256 expires) external onlyMinter returns (uint256) {
        ownerOf(id);
        _expiries[id] = expires;
        emit NameRenewed(id, expires);
        return expires;
    }

    /// Sets the registry owner of the name (the "manager") without moving the token.
    function reclaim(uint256 id, address owner) external {
        _requireAuthorized(id);
        ens.setSubnodeOwner(baseNode, bytes32(id), owner);
    }

    function approve(address to, uint256 id) external {
        _requireAuthorized(id);
        _tokenApprovals[id] = to;
        emit Approval(ownerOf(id), to, id);
    }

    function setApprovalForAll(address operator, bool approved) external {
        _operatorApprovals[msg.sender][operator] = approved;
        emit ApprovalForAll(msg.sender, operator, approved);
    }

    function isApprovedForAll(address owner, address operator) external view returns (bool) {
        return _operatorApprovals[owner][operator];
    }

    /// As on mainnet, moving the token does not change the registry owner: call `reclaim`.
    function transferFrom(address from, address to, uint256 id) public {
        _requireAuthorized(id);
        if (ownerOf(id) != from) revert WrongOwner(id, from);
        if (to == address(0)) revert ZeroAddress();
        _move(from, to, id);
    }

    function safeTransferFrom(address from, address to, uint256 id) external {
        transferFrom(from, to, id);
    }

    function safeTransferFrom(address from, address to, uint256 id, bytes calldata) external {
        transferFrom(from, to, id);
    }

    function _move(address from, address to, uint256 id) private {
        delete _tokenApprovals[id];
        if (from != address(0)) _balances[from] -= 1;
        if (to != address(0)) _balances[to] += 1;
        _owners[id] = to;
        emit Transfer(from, to, id);
    }

    function _requireAuthorized(uint256 id) private view {
        address owner = ownerOf(id);
        if (
            msg.sender != owner && !_isMinter(msg.sender) && _tokenApprovals[id] != msg.sender
                && !_operatorApprovals[owner][msg.sender]
        ) revert Unauthorized(msg.sender);
    }
}
