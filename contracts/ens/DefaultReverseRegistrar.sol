// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Minted} from "../common/Minted.sol";

/// @notice Devnet stand-in for the ENSIP-19 DefaultReverseRegistrar: one default (all-chain)
/// primary name per address, announced by NameForAddrChanged.
contract DefaultReverseRegistrar is Minted {
    event NameForAddrChanged(address indexed addr, string name);

    mapping(address => string) private _names;

    function setName(string calldata name) external {
        _setName(msg.sender, name);
    }

    /// The caller is `addr` itself or the minter.
    function setNameForAddr(address addr, string calldata name) external {
        if (msg.sender != addr && !_isMinter(msg.sender)) revert Unauthorized(msg.sender);
        _setName(addr, name);
    }

    function nameForAddr(address addr) external view returns (string memory) {
        return _names[addr];
    }

    function _setName(address addr, string calldata name) private {
        _names[addr] = name;
        emit NameForAddrChanged(addr, name);
    }
}
