// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Minted} from "../common/Minted.sol";
import {ENSRegistry} from "./ENSRegistry.sol";
import {NameWrapper} from "./NameWrapper.sol";

/// @notice Devnet stand-in for the ENS PublicResolver: addresses per coin type, texts, contenthash,
/// DNS RRsets, reverse names, versioned so that `clearRecords` wipes everything at once
/// (VersionChanged). Events and setter signatures follow mainnet, multicall included.
contract PublicResolver is Minted {
    event AddrChanged(bytes32 indexed node, address a);
    event AddressChanged(bytes32 indexed node, uint256 coinType, bytes newAddress);
    event TextChanged(bytes32 indexed node, string indexed indexedKey, string key, string value);
    event ContenthashChanged(bytes32 indexed node, bytes hash);
    event DNSRecordChanged(bytes32 indexed node, bytes name, uint16 resource, bytes record);
    event DNSRecordDeleted(bytes32 indexed node, bytes name, uint16 resource);
    event NameChanged(bytes32 indexed node, string name);
    event VersionChanged(bytes32 indexed node, uint64 newVersion);

    error BadAddressLength();
    error MalformedRecord();

    uint256 private constant COIN_TYPE_ETH = 60;

    ENSRegistry public immutable ens;
    NameWrapper public immutable nameWrapper;

    mapping(bytes32 => uint64) public recordVersions;
    mapping(uint64 => mapping(bytes32 => mapping(uint256 => bytes))) private _addresses;
    mapping(uint64 => mapping(bytes32 => mapping(string => string))) private _texts;
    mapping(uint64 => mapping(bytes32 => bytes)) private _hashes;
    mapping(uint64 => mapping(bytes32 => string)) private _names;
    mapping(uint64 => mapping(bytes32 => mapping(bytes32 => mapping(uint16 => bytes)))) private _dnsRecords;

    constructor(ENSRegistry ens_, NameWrapper nameWrapper_) {
        ens = ens_;
        nameWrapper = nameWrapper_;
    }

    modifier authorised(bytes32 node) {
        if (!isAuthorised(node)) revert Unauthorized(msg.sender);
        _;
    }

    /// The registry owner, or the wrapped owner when the wrapper holds the node, or the minter.
    function isAuthorised(bytes32 node) public view returns (bool) {
        if (_isMinter(msg.sender)) return true;
        address owner = ens.owner(node);
        if (owner == address(nameWrapper)) owner = nameWrapper.ownerOf(uint256(node));
        return owner == msg.sender || ens.isApprovedForAll(owner, msg.sender);
    }

    // ---- writes ----

    function clearRecords(bytes32 node) external authorised(node) {
        recordVersions[node]++;
        emit VersionChanged(node, recordVersions[node]);
    }

    function setAddr(bytes32 node, address a) external authorised(node) {
        _setAddr(node, COIN_TYPE_ETH, abi.encodePacked(a));
    }

    function setAddr(bytes32 node, uint256 coinType, bytes calldata a) external authorised(node) {
        _setAddr(node, coinType, a);
    }

    function setText(bytes32 node, string calldata key, string calldata value) external authorised(node) {
        _texts[recordVersions[node]][node][key] = value;
        emit TextChanged(node, key, key, value);
    }

    function setContenthash(bytes32 node, bytes calldata hash) external authorised(node) {
        _hashes[recordVersions[node]][node] = hash;
        emit ContenthashChanged(node, hash);
    }

    function setName(bytes32 node, string calldata newName) external authorised(node) {
        _names[recordVersions[node]][node] = newName;
        emit NameChanged(node, newName);
    }

    /// `data` is DNS wire-format resource records (uncompressed names). Consecutive records with
    /// the same name and type form one RRset, stored and announced whole; an RRset whose first
    /// record has empty RDATA deletes the set. Same rules as mainnet's DNSResolver.
    function setDNSRecords(bytes32 node, bytes calldata data) external authorised(node) {
        uint256 setStart = 0;
        uint256 offset = 0;
        bytes memory setName_;
        uint16 setType;
        bool setDelete;
        while (offset < data.length) {
            (bytes memory rrName, uint16 rrType, uint256 rdLength, uint256 next) = _readRR(data, offset);
            if (setName_.length == 0) {
                (setName_, setType, setDelete) = (rrName, rrType, rdLength == 0);
            } else if (rrType != setType || keccak256(rrName) != keccak256(setName_)) {
                _setRRSet(node, setName_, setType, data[setStart:offset], setDelete);
                (setName_, setType, setDelete, setStart) = (rrName, rrType, rdLength == 0, offset);
            }
            offset = next;
        }
        if (setName_.length > 0) _setRRSet(node, setName_, setType, data[setStart:], setDelete);
    }

    /// Runs several setters in one transaction, as mainnet's Multicallable.
    function multicall(bytes[] calldata data) external returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; i++) {
            (bool ok, bytes memory result) = address(this).delegatecall(data[i]);
            if (!ok) {
                assembly {
                    revert(add(result, 32), mload(result))
                }
            }
            results[i] = result;
        }
    }

    // ---- views ----

    function addr(bytes32 node) external view returns (address payable) {
        bytes memory a = _addresses[recordVersions[node]][node][COIN_TYPE_ETH];
        if (a.length != 20) return payable(address(0));
        return payable(address(bytes20(a)));
    }

    function addr(bytes32 node, uint256 coinType) external view returns (bytes memory) {
        return _addresses[recordVersions[node]][node][coinType];
    }

    function text(bytes32 node, string calldata key) external view returns (string memory) {
        return _texts[recordVersions[node]][node][key];
    }

    function contenthash(bytes32 node) external view returns (bytes memory) {
        return _hashes[recordVersions[node]][node];
    }

    function name(bytes32 node) external view returns (string memory) {
        return _names[recordVersions[node]][node];
    }

    /// `nameHash` = keccak256 of the DNS wire-encoded owner name of the RRset.
    function dnsRecord(bytes32 node, bytes32 nameHash, uint16 resource) external view returns (bytes memory) {
        return _dnsRecords[recordVersions[node]][node][nameHash][resource];
    }

    // ---- internals ----

    function _setAddr(bytes32 node, uint256 coinType, bytes memory a) private {
        emit AddressChanged(node, coinType, a);
        if (coinType == COIN_TYPE_ETH) {
            if (a.length != 20 && a.length != 0) revert BadAddressLength();
            emit AddrChanged(node, a.length == 0 ? address(0) : address(bytes20(a)));
        }
        _addresses[recordVersions[node]][node][coinType] = a;
    }

    function _setRRSet(bytes32 node, bytes memory rrName, uint16 rrType, bytes calldata rrset, bool deleteSet)
        private
    {
        uint64 version = recordVersions[node];
        bytes32 nameHash = keccak256(rrName);
        if (deleteSet) {
            if (_dnsRecords[version][node][nameHash][rrType].length != 0) {
                delete _dnsRecords[version][node][nameHash][rrType];
                emit DNSRecordDeleted(node, rrName, rrType);
            }
        } else {
            _dnsRecords[version][node][nameHash][rrType] = rrset;
            emit DNSRecordChanged(node, rrName, rrType, rrset);
        }
    }

    /// Reads one resource record at `offset`: owner name, type, RDATA length, offset of the next.
    function _readRR(bytes calldata data, uint256 offset)
        private
        pure
        returns (bytes memory rrName, uint16 rrType, uint256 rdLength, uint256 next)
    {
        uint256 p = offset;
        while (true) {
            if (p >= data.length) revert MalformedRecord();
            uint256 len = uint8(data[p]);
            if (len >= 0xc0) revert MalformedRecord(); // compression pointers are not allowed
            p += len + 1;
            if (len == 0) break;
        }
        rrName = data[offset:p];
        // TYPE(2) CLASS(2) TTL(4) RDLENGTH(2)
        if (p + 10 > data.length) revert MalformedRecord();
        rrType = uint16(bytes2(data[p:p + 2]));
        rdLength = uint16(bytes2(data[p + 8:p + 10]));
        next = p + 10 + rdLength;
        if (next > data.length) revert MalformedRecord();
    }
}
