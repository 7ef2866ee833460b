import Foundation

/// The column names of one result, shared by all its rows.
final class PostgresColumns: Sendable {
    let names: [String]
    let indexByName: [String: Int]

    init(names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        // With duplicate names (`SELECT a.id, b.id`), the first one wins, as with PQfnumber.
        for (position, name) in names.enumerated() where index[name] == nil { index[name] = position }
        self.indexByName = index
    }
}

/// One row of a result, with every value in PostgreSQL's text output format.
///
/// Values are read by column name. The typed accessors throw `PostgresError` of kind `.query` when the
/// column is missing, NULL (except `optionalDate`) or not in the expected format; their messages name the
/// column, never the value.
public struct PostgresRow: Sendable {
    let columns: PostgresColumns
    let values: [String?]

    /// The text value of a column, or `nil` when it is SQL NULL or there is no such column.
    /// - Parameter column: The column name as the query labels it (`AS name`).
    public subscript(_ column: String) -> String? {
        guard let index = columns.indexByName[column] else { return nil }
        return values[index]
    }

    /// The text value of a column.
    /// - Parameter column: The column name.
    /// - Throws: `PostgresError` (`.query`) when the column is missing or NULL.
    public func string(_ column: String) throws -> String {
        guard let index = columns.indexByName[column] else {
            throw PostgresError(kind: .query, message: "no column \"\(column)\" in the result")
        }
        guard let value = values[index] else {
            throw PostgresError(kind: .query, message: "column \"\(column)\" is NULL")
        }
        return value
    }

    /// An integer column (`smallint`, `integer`, `bigint`, or a count).
    /// - Parameter column: The column name.
    /// - Throws: `PostgresError` (`.query`) when the column is missing, NULL or not a decimal integer.
    public func int(_ column: String) throws -> Int {
        guard let value = Int(try string(column)) else {
            throw PostgresError(kind: .query, message: "column \"\(column)\" is not an integer")
        }
        return value
    }

    /// A `boolean` column, whose text output is `t` or `f`.
    /// - Parameter column: The column name.
    /// - Throws: `PostgresError` (`.query`) when the column is missing, NULL or not `t`/`f`.
    public func bool(_ column: String) throws -> Bool {
        switch try string(column) {
        case "t": return true
        case "f": return false
        default: throw PostgresError(kind: .query, message: "column \"\(column)\" is not a boolean")
        }
    }

    /// A `timestamptz` column as a `Date`, or `nil` when it is NULL. Microseconds are kept.
    ///
    /// Connections made by this module set `TimeZone` to UTC and `DateStyle` to ISO, so the text is
    /// `2026-11-30 11:16:16.123456+00`; other offsets (`+05:30`) and ` BC` are understood too.
    /// - Parameter column: The column name.
    /// - Throws: `PostgresError` (`.query`) when the column is missing or not an ISO timestamp
    ///   (including `infinity`, which `Date` cannot represent).
    public func optionalDate(_ column: String) throws -> Date? {
        guard let index = columns.indexByName[column] else {
            throw PostgresError(kind: .query, message: "no column \"\(column)\" in the result")
        }
        guard let text = values[index] else { return nil }
        guard let date = PostgresTimestamp.parse(text) else {
            throw PostgresError(kind: .query, message: "column \"\(column)\" is not an ISO timestamp")
        }
        return date
    }

    /// A `timestamptz` column as a `Date`; see `optionalDate(_:)`.
    /// - Parameter column: The column name.
    /// - Throws: `PostgresError` (`.query`) when the column is missing, NULL or not an ISO timestamp.
    public func date(_ column: String) throws -> Date {
        guard let date = try optionalDate(column) else {
            throw PostgresError(kind: .query, message: "column \"\(column)\" is NULL")
        }
        return date
    }
}

/// The outcome of one statement.
public struct PostgresResult: Sendable {
    /// The returned rows, in order (empty for commands without `RETURNING`).
    public let rows: [PostgresRow]
    /// The count from the command tag (`PQcmdTuples`): rows inserted, updated, deleted or selected; 0 for
    /// commands that report none.
    public let rowsAffected: Int
    /// The command tag, for example `INSERT 0 1` or `ROLLBACK` (`PQcmdStatus`).
    let commandTag: String

    /// The first row, if any.
    public var first: PostgresRow? { rows.first }
}

/// Conversion between `Date` and PostgreSQL's ISO `timestamptz` text, to microsecond precision.
///
/// Source: PostgreSQL 15 documentation §8.5.2 "Date/Time Output" (ISO style).
public enum PostgresTimestamp {
    private static let secondsFrom1970To2001: Int64 = 978_307_200

    /// Formats a date as `timestamptz` input text in UTC, for example `2026-11-30 11:16:16.123456+00`,
    /// rounded to the nearest microsecond (PostgreSQL's resolution). Pass it as a text parameter.
    /// - Parameter date: The instant.
    /// - Returns: The text; years before 1 are written with ` BC`.
    public static func format(_ date: Date) -> String {
        // Work from the reference date (2001) where `Date` stores its Double, to keep microseconds exact.
        let micros = Int64((date.timeIntervalSinceReferenceDate * 1_000_000).rounded())
        let (secondsSince2001, fraction) = floorDivide(micros, 1_000_000)
        let seconds = secondsSince2001 + secondsFrom1970To2001
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civil(fromDays: days)
        let displayYear = year > 0 ? year : 1 - year
        var text = pad(displayYear, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + " "
        text += pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        text += "." + pad(fraction, 6) + "+00"
        return year > 0 ? text : text + " BC"
    }

    /// Parses ISO `timestamptz` output such as `2026-11-30 11:16:16.123456+00`, `…+05:30`, `…-03:00:00`
    /// or `0044-03-15 10:00:00+00 BC`. Text without an offset (a plain `timestamp`) is read as UTC.
    /// - Parameter text: The column text.
    /// - Returns: The instant, or `nil` when the text is not in that format (`infinity` included).
    public static func parse(_ text: String) -> Date? {
        var bytes = Array(text.utf8)
        var beforeChrist = false
        if bytes.count > 3, bytes.suffix(3) == Array(" BC".utf8) {
            beforeChrist = true
            bytes.removeLast(3)
        }
        var scanner = Scanner(bytes: bytes)
        guard let rawYear = scanner.number(minDigits: 4, maxDigits: 9), scanner.take(UInt8(ascii: "-")),
            let month = scanner.number(exactly: 2), scanner.take(UInt8(ascii: "-")),
            let day = scanner.number(exactly: 2), scanner.take(UInt8(ascii: " ")),
            let hour = scanner.number(exactly: 2), scanner.take(UInt8(ascii: ":")),
            let minute = scanner.number(exactly: 2), scanner.take(UInt8(ascii: ":")),
            let second = scanner.number(exactly: 2),
            (1...12).contains(month), (1...31).contains(day), hour <= 24, minute < 60, second < 61
        else { return nil }
        var micros: Int64 = 0
        if scanner.take(UInt8(ascii: ".")) {
            var digits = 0
            while let digit = scanner.digit() {
                digits += 1
                guard digits <= 6 else { return nil }
                micros = micros * 10 + digit
            }
            guard digits > 0 else { return nil }
            for _ in digits..<6 { micros *= 10 }
        }
        var offsetSeconds: Int64 = 0
        if let sign = scanner.peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            scanner.advance()
            guard let offsetHours = scanner.number(exactly: 2) else { return nil }
            offsetSeconds = offsetHours * 3600
            if scanner.take(UInt8(ascii: ":")) {
                guard let offsetMinutes = scanner.number(exactly: 2) else { return nil }
                offsetSeconds += offsetMinutes * 60
                if scanner.take(UInt8(ascii: ":")) {
                    guard let offsetSecs = scanner.number(exactly: 2) else { return nil }
                    offsetSeconds += offsetSecs
                }
            }
            if sign == UInt8(ascii: "-") { offsetSeconds = -offsetSeconds }
        }
        guard scanner.atEnd else { return nil }
        let year = beforeChrist ? 1 - rawYear : rawYear
        let days = days(fromCivil: year, month, day)
        let localSeconds = days * 86_400 + hour * 3600 + minute * 60 + second
        let utcSeconds = localSeconds - offsetSeconds
        return Date(
            timeIntervalSinceReferenceDate: Double(utcSeconds - secondsFrom1970To2001) + Double(micros) / 1_000_000)
    }

    // Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian, day 0 = 1970-01-01).
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays value: Int64) -> (Int64, Int64, Int64) {
        let z = value + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let remainder = ((a % b) + b) % b
        return ((a - remainder) / b, remainder)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { position == bytes.count }
        func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }
        mutating func advance() { position += 1 }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek() == byte else { return false }
            position += 1
            return true
        }

        mutating func digit() -> Int64? {
            guard let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            position += 1
            return Int64(byte - UInt8(ascii: "0"))
        }

        mutating func number(exactly count: Int) -> Int64? { number(minDigits: count, maxDigits: count) }

        mutating func number(minDigits: Int, maxDigits: Int) -> Int64? {
            var value: Int64 = 0
            var count = 0
            while count < maxDigits, let digit = digit() {
                value = value * 10 + digit
                count += 1
            }
            return count >= minDigits ? value : nil
        }
    }
}
