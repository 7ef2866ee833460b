import Foundation
import QRCode
import Testing

/// The SVG's path read back into a module grid (each `M x y h n v1 h-n z` run), to compare with the matrix.
private func modules(ofSVG svg: String, width: Int) -> [Bool] {
    guard let start = svg.range(of: " d=\""), let end = svg[start.upperBound...].firstIndex(of: "\"") else { return [] }
    var grid = [Bool](repeating: false, count: width * width)
    for run in svg[start.upperBound..<end].split(separator: "z") {
        let numbers = run.split(whereSeparator: { !"0123456789-".contains($0) }).compactMap { Int($0) }
        guard numbers.count >= 3 else { continue }
        let (x, y, length) = (numbers[0] - 4, numbers[1] - 4, numbers[2])
        for column in x..<(x + length) { grid[y * width + column] = true }
    }
    return grid
}

@Suite struct QRCodeTests {
    static let uri =
        "otpauth://totp/ZevID:ada%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=ZevID&algorithm=SHA1&digits=6&period=30"

    @Test func encodesAnAuthenticatorURIWithTheThreeFinderPatterns() throws {
        let code = try #require(QRCode(Self.uri))
        #expect(code.width == 17 + 4 * code.version)
        #expect(code.modules.count == code.width * code.width)
        // A finder pattern (ISO/IEC 18004 §6.3.3): a dark 7×7 ring, a light ring, a dark 3×3 centre.
        for (left, top) in [(0, 0), (code.width - 7, 0), (0, code.width - 7)] {
            for dy in 0..<7 {
                for dx in 0..<7 {
                    let ring = max(abs(dx - 3), abs(dy - 3))
                    #expect(code.isDark(x: left + dx, y: top + dy) == (ring != 2), "finder at \(left),\(top)")
                }
            }
        }
    }

    @Test func theSVGDrawsExactlyTheMatrixInsideAQuietZone() throws {
        let code = try #require(QRCode(Self.uri))
        let svg = code.svg(label: "QR code \"for\" <you>")
        let size = code.width + 8
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(size) \(size)\""))
        #expect(svg.contains("aria-label=\"QR code &quot;for&quot; &lt;you&gt;\""))
        #expect(!svg.contains("style="), "inline style would be refused by the pages' CSP")
        #expect(modules(ofSVG: svg, width: code.width) == code.modules)
    }

    @Test func longerTextTakesALargerVersionAndEmptyTextNone() throws {
        let short = try #require(QRCode("otpauth://totp/x?secret=A"))
        let long = try #require(QRCode(String(repeating: "A", count: 500)))
        #expect(short.version < long.version)
        #expect(QRCode("") == nil)
        #expect(QRCode(String(repeating: "é", count: 3000)) == nil)
    }
}
