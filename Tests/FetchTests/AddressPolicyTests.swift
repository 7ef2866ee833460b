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
        ("2001::1", "IETF"), ("64:ff9b:1::1", "NAT64"),
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

    @Test(arguments: ["127.000.000.001", "0x7f.0.0.1", "2130706433", "127.1", "localhost", "", "[::1]", "::1%lo", "1.2.3.4 "])
    func refusesTextThatIsNotACanonicalNumericAddress(address: String) {
        #expect(AddressPolicy.refusalReason(address) == "not a numeric IP address")
    }
}
