// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Minted} from "../common/Minted.sol";
import {ENSRegistry} from "./ENSRegistry.sol";
import {BaseRegistrar} from "./BaseRegistrar.sol";

/// @notice Devnet stand-in for the ENS NameWrapper: an ERC-1155 whose token id is the node. It owns
/// wrapped names in the registry (and wrapped .eth names in the registrar), and announces each
/// wrap with `NameWrapped` carrying the DNS wire-encoded name, which is how subname labels become
/// known in plaintext. Fuses are recorded, not enforced.
contract NameWrapper is Minted {
    event NameWrapped(bytes32 indexed node, bytes name, address owner, uint32 fuses, uint64 expiry);
    event NameUnwrapped(bytes32 indexed node, address owner);
    event FusesSet(bytes32 indexed node, uint32 fuses);
    event ExpiryExtended(bytes32 indexed node, uint64 expiry);
    event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value);
    event ApprovalForAll(address indexed account, address indexed operator, bool approved);

    error NotWrapped(bytes32 node);
    error LabelTooLong();
    error ZeroAddress();
    error WrongOwner(uint256 id, address expected);

    uint32 public constant PARENT_CANNOT_CONTROL = 1 << 16;
    uint32 public constant IS_DOT_ETH = 1 << 17;
    uint64 public constant GRACE_PERIOD = 90 days;
    bytes32 public constant ETH_NODE = 0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae;

    struct Data {
        address owner;
        uint32 fuses;
        uint64 expiry;
    }

    ENSRegistry public immutable ens;
    BaseRegistrar public immutable registrar;
    mapping(uint256 => Data) private _tokens;
    mapping(address => mapping(address => bool)) private _operatorApprovals;
    /// node → DNS wire-encoded name, for every node whose name is known (root, eth, wrapped names).
    mapping(bytes32 => bytes) public names;

    constructor(ENSRegistry ens_, BaseRegistrar registrar_) {
        ens = ens_;
        registrar = registrar_;
        names[bytes32(0)] = hex"00";
        names[ETH_NODE] = hex"0365746800";
    }

    function ownerOf(uint256 id) public view returns (address) {
        return _tokens[id].owner;
    }

    function getData(uint256 id) external view returns (address owner, uint32 fuses, uint64 expiry) {
        Data memory d = _tokens[id];
        return (d.owner, d.fuses, d.expiry);
    }

    function isWrapped(bytes32 node) external view returns (bool) {
        return _tokens[uint256(node)].owner != address(0);
    }

    function balanceOf(address account, uint256 id) external view returns (uint256) {
        return _tokens[id].owner == account ? 1 : 0;
    }

    function setApprovalForAll(address operator, bool approved) external {
        _operatorApprovals[msg.sender][operator] = approved;
        emit ApprovalForAll(msg.sender, operator, approved);
    }

    function isApprovedForAll(address account, address operator) external view returns (bool) {
        return _operatorApprovals[account][operator];
    }

    /// Registers `label`.eth to this wrapper in the registrar and wraps it for `owner`. As on
    /// mainnet the wrapped expiry is the registrar expiry plus the grace period.
    function registerAndWrapETH2LD(
        string calldata label,
        address owner,
        uint256 expires,
        address resolver,
        uint16 ownerControlledFuses
    ) external onlyMinter returns (uint256 registrarExpiry) {
        bytes32 labelhash = keccak256(bytes(label));
        registrarExpiry = registrar.register(uint256(labelhash), address(this), expires);
        bytes32 node = keccak256(abi.encodePacked(ETH_NODE, labelhash));
        _wrap(
            node,
            _encode(label, names[ETH_NODE]),
            owner,
            uint32(ownerControlledFuses) | PARENT_CANNOT_CONTROL | IS_DOT_ETH,
            uint64(registrarExpiry) + GRACE_PERIOD
        );
        if (resolver != address(0)) ens.setResolver(node, resolver);
    }

    /// Creates (or replaces) a wrapped subname of a wrapped parent.
    function setSubnodeRecord(
        bytes32 parentNode,
        string calldata label,
        address owner,
        address resolver,
        uint64 ttl,
        uint32 fuses,
        uint64 expiry
    ) external returns (bytes32 node) {
        _requireAuthorized(uint256(parentNode));
        bytes memory parentName = names[parentNode];
        if (parentName.length == 0) revert NotWrapped(parentNode);
        bytes32 labelhash = keccak256(bytes(label));
        node = keccak256(abi.encodePacked(parentNode, labelhash));
        ens.setSubnodeRecord(parentNode, labelhash, address(this), resolver, ttl);
        _wrap(node, _encode(label, parentName), owner, fuses, expiry);
    }

    /// Gives a wrapped .eth name back to the registrar and registry owners.
    function unwrapETH2LD(bytes32 labelhash, address registrant, address controller) external {
        bytes32 node = keccak256(abi.encodePacked(ETH_NODE, labelhash));
        _requireAuthorized(uint256(node));
        _burn(node);
        ens.setOwner(node, controller);
        emit NameUnwrapped(node, controller);
        registrar.transferFrom(address(this), registrant, uint256(labelhash));
    }

    function setFuses(bytes32 node, uint16 ownerControlledFuses) external returns (uint32) {
        _requireAuthorized(uint256(node));
        Data storage d = _tokens[uint256(node)];
        d.fuses |= ownerControlledFuses;
        emit FusesSet(node, d.fuses);
        return d.fuses;
    }

    function extendExpiry(bytes32 node, uint64 expiry) external onlyMinter returns (uint64) {
        Data storage d = _tokens[uint256(node)];
        if (d.owner == address(0)) revert NotWrapped(node);
        d.expiry = expiry;
        emit ExpiryExtended(node, expiry);
        return expiry;
    }

    function safeTransferFrom(address from, address to, uint256 id, uint256 amount, bytes calldata) external {
        _requireAuthorized(id);
        if (_tokens[id].owner != from || amount != 1) revert WrongOwner(id, from);
        if (to == address(0)) revert ZeroAddress();
        _tokens[id].owner = to;
        emit TransferSingle(msg.sender, from, to, id, 1);
    }

    function _wrap(bytes32 node, bytes memory name, address owner, uint32 fuses, uint64 expiry) private {
        if (owner == address(0)) revert ZeroAddress();
        names[node] = name;
        Data storage d = _tokens[uint256(node)];
        // Re-wrapping burns the previous token first, as ERC1155Fuse does.
        if (d.owner != address(0)) emit TransferSingle(msg.sender, d.owner, address(0), uint256(node), 1);
        d.owner = owner;
        d.fuses = fuses;
        d.expiry = expiry;
        emit TransferSingle(msg.sender, address(0), owner, uint256(node), 1);
        emit NameWrapped(node, name, owner, fuses, expiry);
    }

    function _burn(bytes32 node) private {
        Data storage d = _tokens[uint256(node)];
        address owner = d.owner;
        if (owner == address(0)) revert NotWrapped(node);
        delete _tokens[uint256(node)];
        emit TransferSingle(msg.sender, owner, address(0), uint256(node), 1);
    }

    function _encode(string calldata label, bytes memory parentName) private pure returns (bytes memory) {
        bytes memory l = bytes(label);
        if (l.length == 0 || l.length > 255) revert LabelTooLong();
        return abi.encodePacked(uint8(l.length), l, parentName);
    }

    function _requireAuthorized(uint256 id) private view {
        address owner = _tokens[id].owner;
        if (msg.sender != owner && !_isMinter(msg.sender) && !_operatorApprovals[owner][msg.sender]) {
            revert Unauthorized(msg.sender);
        }
    }
}
