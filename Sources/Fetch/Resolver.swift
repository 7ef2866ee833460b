import Glibc

/// Name resolution for a fetch, done before libcurl sees the request so the addresses can be checked and
/// then pinned.
enum Resolver {
    /// The addresses for `host`:`port`: those of the matching overrides when any entry matches, else
    /// `getaddrinfo`'s (IPv4 and IPv6, duplicates removed, in the resolver's order).
    static func resolve(host: String, port: Int, overrides: [ResolveOverride]) -> Result<[IPAddress], FetchFailure> {
        let overridden = overrides.filter { $0.host == host && $0.port == port }.compactMap { IPAddress($0.address) }
        if !overridden.isEmpty { return .success(unique(overridden)) }

        // RFC 6761 §6.4: "Name resolution APIs and libraries SHOULD recognize 'invalid' names as special and
        // SHOULD always return immediately with a negative response." glibc would ask the DNS server.
        if host == "invalid" || host.hasSuffix(".invalid") {
            return .failure(.dnsError("\(host) does not resolve (.invalid names never do, RFC 6761)"))
        }

        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard status == 0 else {
            let reason = String(cString: gai_strerror(status))
            return .failure(.dnsError("\(host) does not resolve: \(reason)"))
        }
        var addresses: [IPAddress] = []
        var cursor = list
        while let entry = cursor {
            if let sockaddr = entry.pointee.ai_addr {
                switch entry.pointee.ai_family {
                case AF_INET:
                    let address = sockaddr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    addresses.append(.v4(withUnsafeBytes(of: address) { Array($0) }))
                case AF_INET6:
                    let address = sockaddr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    addresses.append(.v6(withUnsafeBytes(of: address) { Array($0) }))
                default:
                    break
                }
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else { return .failure(.dnsError("\(host) has no IPv4 or IPv6 address")) }
        return .success(unique(addresses))
    }

    /// The `CURLOPT_RESOLVE` entry pinning `addresses`: `host:port:a,[b]` (IPv6 in brackets).
    static func pinEntry(host: String, port: Int, addresses: [IPAddress]) -> String {
        let list = addresses.map { $0.isV6 ? "[\($0)]" : "\($0)" }.joined(separator: ",")
        return "\(host):\(port):\(list)"
    }

    private static func unique(_ addresses: [IPAddress]) -> [IPAddress] {
        var seen: [IPAddress] = []
        for address in addresses where !seen.contains(address) { seen.append(address) }
        return seen
    }
}
