internal import CQRencode
import Encoding

/// A QR code symbol (ISO/IEC 18004) encoded by libqrencode, the only module that touches it, and drawn
/// as SVG here in Swift from the module matrix libqrencode returns.
public struct QRCode: Sendable, Equatable {
    /// Modules per side (21 for version 1, 4 more per version).
    public let width: Int
    /// The QR version libqrencode chose (1 to 40): the smallest that holds the data.
    public let version: Int
    /// Row-major, `width * width` modules; true is a dark module.
    public let modules: [Bool]

    /// Error correction level (ISO/IEC 18004 §7.5.1): the share of the symbol that may be damaged and
    /// still read.
    public enum Correction: Sendable {
        /// About 7 %.
        case low
        /// About 15 %: what authenticator-app QR codes commonly use.
        case medium
        /// About 25 %.
        case quartile
        /// About 30 %.
        case high
    }

    /// Encodes `text` as 8-bit bytes (its UTF-8), in the smallest version that holds it.
    /// - Returns: the symbol, or nil when the text is empty or longer than a version 40 symbol holds at
    ///   this correction level (2,953 bytes at `.low`), or libqrencode cannot allocate.
    public init?(_ text: String, correction: Correction = .medium) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return nil }
        let level: QRecLevel
        switch correction {
        case .low: level = QR_ECLEVEL_L
        case .medium: level = QR_ECLEVEL_M
        case .quartile: level = QR_ECLEVEL_Q
        case .high: level = QR_ECLEVEL_H
        }
        // Version 0 asks libqrencode for the smallest version that fits; QRcode_encodeData takes the bytes
        // with their length (8-bit mode), so no byte of the text is taken for a terminator.
        guard let symbol = bytes.withUnsafeBufferPointer({ QRcode_encodeData(Int32($0.count), $0.baseAddress, 0, level) }) else {
            return nil
        }
        defer { QRcode_free(symbol) }
        let width = Int(symbol.pointee.width)
        // Each byte of `data` describes one module; its least significant bit is 1 for a dark module.
        let data = UnsafeBufferPointer(start: symbol.pointee.data, count: width * width)
        self.width = width
        self.version = Int(symbol.pointee.version)
        self.modules = data.map { $0 & 1 == 1 }
    }

    /// Whether the module at column `x`, row `y` (from the top left, 0-based) is dark.
    public func isDark(x: Int, y: Int) -> Bool { modules[y * width + x] }

    /// The symbol as a standalone SVG element: one `<path>` of unit squares, one per dark module, on a
    /// white background with the 4-module quiet zone ISO/IEC 18004 §6.3.8 asks for. Colours are
    /// presentation attributes (`fill`), not `style`, so a page whose Content-Security-Policy allows no
    /// inline style still draws it. The element scales with CSS (its `viewBox` is in modules).
    /// - Parameter label: the accessible name (`aria-label`), read by screen readers in place of the image.
    public func svg(label: String) -> String {
        let quiet = 4
        let size = width + 2 * quiet
        var path = ""
        path.reserveCapacity(width * width * 4)
        for y in 0..<width {
            var x = 0
            while x < width {
                guard isDark(x: x, y: y) else {
                    x += 1
                    continue
                }
                // A run of dark modules on this row becomes one rectangle.
                var run = 1
                while x + run < width, isDark(x: x + run, y: y) { run += 1 }
                path += "M\(x + quiet) \(y + quiet)h\(run)v1h-\(run)z"
                x += run
            }
        }
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(size) \(size)\" role=\"img\" "
            + "aria-label=\"\(HTML.escape(label))\" shape-rendering=\"crispEdges\">"
            + "<rect width=\"\(size)\" height=\"\(size)\" fill=\"#fff\"/><path fill=\"#000\" d=\"\(path)\"/></svg>"
    }

}
