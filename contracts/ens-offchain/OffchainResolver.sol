// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice The devnet's ENS offchain resolver: every name whose registry entry (or nearest
/// ancestor's, ENSIP-10) points here is answered by a CCIP-Read gateway (EIP-3668), the way ENS's
/// reference offchain resolver (ensdomains/offchain-resolver) works; written for omniname's
/// devnet, not copied from it.
///
/// - `resolve(name, data)` (ENSIP-10's extended resolver) never answers itself: it reverts with
///   `OffchainLookup`, sending the client to `url` with `callData` =
///   `IResolverService.resolve(name, data)` (selector 0x9061b923, the same as the extended
///   resolver's own `resolve`).
/// - The gateway answers `abi.encode(bytes result, uint64 expires, bytes sig)`; the client hands
///   that to `resolveWithProof(response, extraData)`, which recovers the signer of
///   keccak256(0x1900 ‖ resolver ‖ expires ‖ keccak256(callData) ‖ keccak256(result))
///   (EIP-191 version 0: "data with an intended validator", the validator being this resolver),
///   checks it is a signer set at deployment and that `expires` is not past, and returns
///   `result`: the ABI-encoded answer of the inner call (addr, text, contenthash …).
/// - The owner (the devnet deployer) may change the gateway URL: the gateway's port is picked
///   when the devnet starts, and a resumed devnet may get another one.
/// - It emits no events: every event of the devnet's own contracts is one of the mainnet
///   registries' (docs/chain-facts.md, src/devnet/contracts.test.ts), and this one has none to mirror.
contract OffchainResolver {
    error OffchainLookup(address sender, string[] urls, bytes callData, bytes4 callbackFunction, bytes extraData);
    error InvalidSignature();
    error SignatureExpired(uint64 expires);
    error NotOwner();

    address public immutable owner;
    /// The gateway's EIP-3668 URL template (`{sender}`, `{data}`).
    string public url;
    mapping(address => bool) public signers;

    /// `url_`: the gateway's URL template; `signers_`: the keys its answers may be signed with.
    constructor(string memory url_, address[] memory signers_) {
        owner = msg.sender;
        url = url_;
        for (uint256 i = 0; i < signers_.length; i++) {
            signers[signers_[i]] = true;
        }
    }

    function setUrl(string calldata newUrl) external {
        if (msg.sender != owner) revert NotOwner();
        url = newUrl;
    }

    /// ENSIP-10: `name` is DNS-encoded, `data` the inner resolver call (its node argument included).
    function resolve(bytes calldata name, bytes calldata data) external view returns (bytes memory) {
        // The gateway is asked the same call the client made of us, so that its signature covers it.
        bytes memory callData = abi.encodeWithSelector(this.resolve.selector, name, data);
        string[] memory urls = new string[](1);
        urls[0] = url;
        revert OffchainLookup(
            address(this), urls, callData, this.resolveWithProof.selector, abi.encode(callData, address(this))
        );
    }

    /// The EIP-3668 callback: `response` is the gateway's body, `extraData` what `resolve` reverted with.
    function resolveWithProof(bytes calldata response, bytes calldata extraData) external view returns (bytes memory) {
        (bytes memory result, uint64 expires, bytes memory sig) = abi.decode(response, (bytes, uint64, bytes));
        (bytes memory request, address target) = abi.decode(extraData, (bytes, address));
        bytes32 digest = signatureHash(target, expires, request, result);
        address signer = recover(digest, sig);
        // The target is part of the signed message: an answer signed for another resolver (another
        // deployment trusting the same key) does not verify here.
        if (target != address(this) || signer == address(0) || !signers[signer]) revert InvalidSignature();
        if (expires < block.timestamp) revert SignatureExpired(expires);
        return result;
    }

    /// What the gateway signs (exposed so that a gateway or a test can check its own hashing).
    function signatureHash(address target, uint64 expires, bytes memory request, bytes memory result)
        public
        pure
        returns (bytes32)
    {
        return keccak256(abi.encodePacked(hex"1900", target, expires, keccak256(request), keccak256(result)));
    }

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7 // ERC-165
            || interfaceId == 0x9061b923; // ENSIP-10 IExtendedResolver.resolve(bytes,bytes)
    }

    /// ecrecover over a 65-byte (r, s, v) or 64-byte EIP-2098 (r, yParity‖s) signature; address(0)
    /// when malformed. High-s signatures are refused (malleable: the same message, another sig).
    function recover(bytes32 digest, bytes memory sig) internal pure returns (address) {
        bytes32 r;
        bytes32 s;
        uint8 v;
        if (sig.length == 65) {
            assembly {
                r := mload(add(sig, 0x20))
                s := mload(add(sig, 0x40))
                v := byte(0, mload(add(sig, 0x60)))
            }
            if (v < 27) v += 27;
        } else if (sig.length == 64) {
            bytes32 vs;
            assembly {
                r := mload(add(sig, 0x20))
                vs := mload(add(sig, 0x40))
            }
            s = vs & bytes32(0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff);
            v = uint8(uint256(vs >> 255)) + 27;
        } else {
            return address(0);
        }
        if (uint256(s) > 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0) return address(0);
        if (v != 27 && v != 28) return address(0);
        return ecrecover(digest, v, r, s);
    }
}
