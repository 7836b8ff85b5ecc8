// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Minted} from "../common/Minted.sol";
import {ENSRegistry} from "./ENSRegistry.sol";
import {PublicResolver} from "./PublicResolver.sol";

/// @notice Devnet stand-in for the ENS ReverseRegistrar: owns `addr.reverse`, claims
/// `<hex address>.addr.reverse` (ReverseClaimed) and sets the name on the resolver (NameChanged).
contract ReverseRegistrar is Minted {
    event ReverseClaimed(address indexed addr, bytes32 indexed node);

    bytes32 public constant ADDR_REVERSE_NODE = 0x91d1777781884d03a6757a803996e38de2a42967fb37eeaca72729271025a9e2;

    ENSRegistry public immutable ens;
    PublicResolver public immutable defaultResolver;

    constructor(ENSRegistry ens_, PublicResolver defaultResolver_) {
        ens = ens_;
        defaultResolver = defaultResolver_;
    }

    function setName(string calldata name) external returns (bytes32) {
        return _setNameForAddr(msg.sender, msg.sender, address(defaultResolver), name);
    }

    /// The caller is `addr` itself or the minter.
    function setNameForAddr(address addr, address owner, address resolver, string calldata name)
        external
        returns (bytes32)
    {
        if (msg.sender != addr && !_isMinter(msg.sender)) revert Unauthorized(msg.sender);
        return _setNameForAddr(addr, owner, resolver, name);
    }

    function claim(address owner) external returns (bytes32) {
        return _claim(msg.sender, owner, address(defaultResolver));
    }

    function node(address addr) public pure returns (bytes32) {
        return keccak256(abi.encodePacked(ADDR_REVERSE_NODE, sha3HexAddress(addr)));
    }

    /// keccak256 of the lower-case hex address without 0x, the label of a reverse node.
    function sha3HexAddress(address addr) public pure returns (bytes32 ret) {
        bytes16 digits = "0123456789abcdef";
        bytes memory out = new bytes(40);
        uint160 a = uint160(addr);
        for (uint256 i = 40; i > 0; i--) {
            out[i - 1] = digits[a & 0xf];
            a >>= 4;
        }
        ret = keccak256(out);
    }

    function _setNameForAddr(address addr, address owner, address resolver, string calldata name)
        private
        returns (bytes32 reverseNode)
    {
        reverseNode = _claim(addr, owner, resolver);
        PublicResolver(resolver).setName(reverseNode, name);
    }

    function _claim(address addr, address owner, address resolver) private returns (bytes32 reverseNode) {
        bytes32 label = sha3HexAddress(addr);
        reverseNode = keccak256(abi.encodePacked(ADDR_REVERSE_NODE, label));
        emit ReverseClaimed(addr, reverseNode);
        ens.setSubnodeRecord(ADDR_REVERSE_NODE, label, owner, resolver, 0);
    }
}
