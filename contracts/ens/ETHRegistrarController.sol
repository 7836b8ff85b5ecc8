// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Minted} from "../common/Minted.sol";
import {ENSRegistry} from "./ENSRegistry.sol";
import {BaseRegistrar} from "./BaseRegistrar.sol";
import {NameWrapper} from "./NameWrapper.sol";

/// @notice Devnet stand-in for the ETHRegistrarController (the "wrapped" mainnet variant, whose
/// NameRegistered carries baseCost and premium). No commit-reveal and no price: the minter
/// registers directly, with an absolute expiry, either wrapped (through the NameWrapper, as the
/// 2023 controller does) or unwrapped (registrar token and registry owner set to `owner`).
contract ETHRegistrarController is Minted {
    event NameRegistered(
        string name, bytes32 indexed label, address indexed owner, uint256 baseCost, uint256 premium, uint256 expires
    );
    event NameRenewed(string name, bytes32 indexed label, uint256 cost, uint256 expires);

    error LengthMismatch();

    bytes32 public constant ETH_NODE = 0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae;

    ENSRegistry public immutable ens;
    BaseRegistrar public immutable base;
    NameWrapper public immutable nameWrapper;

    constructor(ENSRegistry ens_, BaseRegistrar base_, NameWrapper nameWrapper_) {
        ens = ens_;
        base = base_;
        nameWrapper = nameWrapper_;
    }

    /// `name` is the plaintext label (normalized Unicode), without `.eth`.
    function register(string calldata name, address owner, uint256 expires, address resolver, bool wrap)
        public
        onlyMinter
    {
        bytes32 label = keccak256(bytes(name));
        if (wrap) {
            nameWrapper.registerAndWrapETH2LD(name, owner, expires, resolver, 0);
        } else {
            uint256 id = uint256(label);
            // As the legacy controller: register to itself, set the resolver, then hand over.
            base.register(id, address(this), expires);
            if (resolver != address(0)) ens.setResolver(keccak256(abi.encodePacked(ETH_NODE, label)), resolver);
            base.reclaim(id, owner);
            base.transferFrom(address(this), owner, id);
        }
        emit NameRegistered(name, label, owner, 0, 0, expires);
    }

    /// Many registrations in one transaction (fixtures and benchmark worlds).
    function registerMany(
        string[] calldata names,
        address[] calldata owners,
        uint256[] calldata expiries,
        address resolver,
        bool[] calldata wrap
    ) external onlyMinter {
        uint256 n = names.length;
        if (owners.length != n || expiries.length != n || wrap.length != n) revert LengthMismatch();
        for (uint256 i = 0; i < n; i++) {
            register(names[i], owners[i], expiries[i], resolver, wrap[i]);
        }
    }

    function renew(string calldata name, uint256 expires) external onlyMinter {
        bytes32 label = keccak256(bytes(name));
        base.renew(uint256(label), expires);
        bytes32 node = keccak256(abi.encodePacked(ETH_NODE, label));
        if (nameWrapper.isWrapped(node)) nameWrapper.extendExpiry(node, uint64(expires) + nameWrapper.GRACE_PERIOD());
        emit NameRenewed(name, label, 0, expires);
    }
}
