import Testing

@testable import Fetch

@Suite struct AddressPolicyTests {
    @Test(arguments: [
        "8.8.8.8", "1.1.1.1", "93.184.216.34", "172.15.255.255", "172.32.0.0", "100.63.255.255", "100.128.0.0",
        "169.253.255.255", "192.0.1.255", "198.17.255.255", "198.20.0.0", "223.255.255.255", "11.0.0.0",
        "2606:4700:4700::1111", "2a00:1450:4001:82b::200e", "2001:4860:4860::8888", "::ffff:8.8.8.8", "64:ff9b::808:808",
        "2002:808:808::1",
    ])
    func allowsPublicAddresses(address: String) {
        #expect(AddressPolicy.refusalReason(address) == nil)
    }

    @Test(arguments: [
        ("127.0.0.1", "loopback"), ("127.255.255.254", "loopback"), ("10.0.0.1", "private"), ("10.255.255.255", "private"),
        ("172.16.0.1", "private"), ("172.31.255.255", "private"), ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"), ("0.0.0.0", "this network"), ("0.1.2.3", "this network"),
        ("100.64.0.1", "carrier-grade NAT"), ("100.127.255.255", "carrier-grade NAT"), ("192.0.0.8", "IETF"),
        ("198.18.0.1", "benchmarking"), ("198.19.255.255", "benchmarking"), ("192.0.2.1", "documentation"),
        ("198.51.100.7", "documentation"), ("203.0.113.9", "documentation"), ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"), ("255.255.255.255", "broadcast"), ("240.0.0.1", "reserved"),
    ])
    func refusesSpecialIPv4(address: String, reason: String) throws {
        let why = try #require(AddressPolicy.refusalReason(address))
        #expect(why.contains(reason), "\(address): \(why)")
    }

    @Test(arguments: [
        ("::1", "loopback"), ("::", "unspecified"), ("fc00::1", "unique local"), ("fd12:3456::1", "unique local"),
        ("fe80::1", "link-local"), ("febf::1", "link-local"), ("fec0::1", "site-local"), ("ff02::1", "multicast"),
        ("2001:db8::1", "documentation"), ("3fff::1", "documentation"), ("100::1", "discard"),
        ("2001::1", "Teredo"), ("64:ff9b:1::1", "NAT64"),
    ])
    func refusesSpecialIPv6(address: String, reason: String) throws {
        let why = try #require(AddressPolicy.refusalReason(address))
        #expect(why.contains(reason), "\(address): \(why)")
    }

    @Test(arguments: [
        ("::ffff:127.0.0.1", "loopback"), ("::ffff:10.1.2.3", "private"), ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:0.0.0.0", "this network"), ("::ffff:7f00:1", "loopback"), ("64:ff9b::a00:1", "private"),
        ("64:ff9b::127.0.0.1", "loopback"), ("2002:c0a8:101::1", "private"), ("::127.0.0.1", "IPv4-compatible"),
        ("::8.8.8.8", "IPv4-compatible"),
    ])
    func refusesIPv6FormsCarryingARefusedIPv4(address: String, reason: String) throws {
        let why = try #require(AddressPolicy.refusalReason(address))
        #expect(why.contains(reason), "\(address): \(why)")
    }

    // Every entry of the IANA IPv4 Special-Purpose Address Registry whose "Globally Reachable" is not True
    // (first and last address of each block), as the registry lists them.
    @Test(arguments: [
        "0.0.0.0", "0.255.255.255",  // 0.0.0.0/8 "this network", 0.0.0.0/32 "this host on this network"
        "10.0.0.0", "10.255.255.255",  // 10.0.0.0/8 private-use
        "100.64.0.0", "100.127.255.255",  // 100.64.0.0/10 shared address space
        "127.0.0.0", "127.255.255.255",  // 127.0.0.0/8 loopback
        "169.254.0.0", "169.254.255.255",  // 169.254.0.0/16 link local
        "172.16.0.0", "172.31.255.255",  // 172.16.0.0/12 private-use
        "192.0.0.0", "192.0.0.255",  // 192.0.0.0/24 IETF protocol assignments
        "192.0.0.7",  // 192.0.0.0/29 IPv4 service continuity prefix
        "192.0.0.8",  // 192.0.0.8/32 IPv4 dummy address
        "192.0.0.170", "192.0.0.171",  // NAT64/DNS64 discovery
        "192.0.2.0", "192.0.2.255",  // 192.0.2.0/24 documentation (TEST-NET-1)
        "192.88.99.0", "192.88.99.255",  // 192.88.99.0/24 deprecated 6to4 relay anycast
        "192.168.0.0", "192.168.255.255",  // 192.168.0.0/16 private-use
        "198.18.0.0", "198.19.255.255",  // 198.18.0.0/15 benchmarking
        "198.51.100.0", "198.51.100.255",  // 198.51.100.0/24 documentation (TEST-NET-2)
        "203.0.113.0", "203.0.113.255",  // 203.0.113.0/24 documentation (TEST-NET-3)
        "240.0.0.0", "255.255.255.254",  // 240.0.0.0/4 reserved
        "255.255.255.255",  // limited broadcast
        "224.0.0.0", "239.255.255.255",  // multicast (RFC 5771)
    ])
    func refusesEveryIPv4RegistryEntryThatIsNotGloballyReachable(address: String) {
        #expect(AddressPolicy.refusalReason(address) != nil, "\(address) must be refused")
    }

    // Every entry of the IANA IPv6 Special-Purpose Address Registry whose "Globally Reachable" is not True,
    // plus the IPv6 forms that carry a refused IPv4 address and the space outside 2000::/3.
    @Test(arguments: [
        "::1",  // loopback
        "::",  // unspecified
        "::ffff:0:0", "::ffff:127.0.0.1", "::ffff:10.0.0.1",  // IPv4-mapped ::ffff:0:0/96
        "::ffff:0:7f00:1", "::ffff:0:0:0", "::ffff:0:808:808",  // IPv4-translated ::ffff:0:0:0/96 (RFC 2765)
        "::127.0.0.1", "::8.8.8.8",  // deprecated IPv4-compatible ::/96
        "64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b::c0a8:1",  // NAT64 64:ff9b::/96 embedding a refused IPv4
        "64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff",  // 64:ff9b:1::/48 local-use translation
        "100::", "100::ffff:ffff:ffff:ffff",  // 100::/64 discard-only
        "100:0:0:1::", "100:0:0:1:ffff:ffff:ffff:ffff",  // 100:0:0:1::/64 dummy prefix
        "2001::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff",  // 2001::/23 IETF protocol assignments
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",  // 2001::/32 Teredo
        "2001:2::", "2001:2:0:ffff:ffff:ffff:ffff:ffff",  // 2001:2::/48 benchmarking
        "2001:10::1",  // 2001:10::/28 deprecated ORCHID
        "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",  // 2001:db8::/32 documentation
        "2002:7f00:1::1", "2002:a00:1::", "2002:c0a8:101::1", "2002:a9fe:a9fe::1",  // 6to4 embedding a refused IPv4
        "3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff",  // 3fff::/20 documentation
        "5f00::", "5f00:ffff::1",  // 5f00::/16 segment routing SIDs
        "fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",  // fc00::/7 unique-local
        "fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",  // fe80::/10 link-local
        "fec0::1",  // deprecated site-local
        "ff00::", "ff02::1", "ff05::2",  // multicast
        "4000::1", "8000::1", "1::1", "e000::1",  // outside global unicast 2000::/3
    ])
    func refusesEveryIPv6RegistryEntryThatIsNotGloballyReachable(address: String) {
        #expect(AddressPolicy.refusalReason(address) != nil, "\(address) must be refused")
    }

    @Test func namesTheIPv4TranslatedForm() throws {
        let why = try #require(AddressPolicy.refusalReason("::ffff:0:7f00:1"))
        #expect(why == "deprecated IPv4-translated (::ffff:0:0:0/96)")
    }

    @Test(arguments: ["127.000.000.001", "0x7f.0.0.1", "2130706433", "127.1", "localhost", "", "[::1]", "::1%lo", "1.2.3.4 "])
    func refusesTextThatIsNotACanonicalNumericAddress(address: String) {
        #expect(AddressPolicy.refusalReason(address) == "not a numeric IP address")
    }
}
