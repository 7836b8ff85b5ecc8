// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice Devnet access control. The deployer (the "minter") and the contracts it trusts
/// ("controllers") may act for anyone: mint, set records, transfer, reset, set reverse records
/// and expiries. Owners keep the ordinary rights over their own tokens.
abstract contract Minted {
    address public immutable minter;
    mapping(address => bool) public isController;

    error Unauthorized(address caller);

    constructor() {
        minter = msg.sender;
    }

    modifier onlyMinter() {
        if (!_isMinter(msg.sender)) revert Unauthorized(msg.sender);
        _;
    }

    function setController(address controller, bool enabled) external {
        if (msg.sender != minter) revert Unauthorized(msg.sender);
        isController[controller] = enabled;
    }

    function _isMinter(address account) internal view returns (bool) {
        return account == minter || isController[account];
    }
}
