import Foundation

/// Dates cross into SQL as Unix seconds (`to_timestamp($n::float8)`), which keeps microseconds and needs
/// no date formatting; the server's injected clock, not `now()`, decides every time it stores.
enum SQLTime {
    static func parameter(_ date: Date) -> String {
        String(date.timeIntervalSince1970)
    }
}
