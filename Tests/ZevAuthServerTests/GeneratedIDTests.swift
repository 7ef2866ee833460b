import Foundation
import Testing

@testable import ZevAuthServer

/// The ids the server makes itself: `OpenSSLSecrets.newID()` (row and attempt ids, RFC 9562 version 4
/// UUIDs) and `RequestID.generate()` (32 lowercase hex digits).
struct GeneratedIDTests {
    @Test func newIDsAreLowercaseVersion4UUIDs() throws {
        let ids = (0..<200).map { _ in OpenSSLSecrets().newID() }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            let parsed = try #require(UUID(uuidString: id))
            #expect(parsed.uuidString.lowercased() == id)
            let bytes = withUnsafeBytes(of: parsed.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 4)  // version 4
            #expect(bytes[8] >> 6 == 0b10)  // the RFC 9562 variant
        }
    }

    @Test func requestIDsAre32LowercaseHexDigits() {
        let ids = (0..<200).map { _ in RequestID.generate() }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.utf8.count == 32 && $0.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } })
    }
}
