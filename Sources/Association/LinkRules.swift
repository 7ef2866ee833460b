import Encoding

/// A link callback as the association check sees it: the path and the query of a registered `https` redirect
/// URI on a link domain (a redirect URI has no fragment, RFC 6749 §3.1.2).
public struct LinkCallback: Sendable, Hashable {
    /// The path as registered, percent-encoded as written (`/auth/callback`).
    public let path: String
    /// The query as registered, without the `?`; `nil` when the URI has no `?`, `""` when it ends in a bare `?`.
    public let query: String?

    /// A callback with this path and query.
    public init(path: String, query: String? = nil) {
        self.path = path
        self.query = query
    }

    /// Splits a registered URI's path and query (`RedirectURI.pathAndQuery`) at its first `?`.
    public init(pathAndQuery: String) {
        guard let question = pathAndQuery.firstIndex(of: "?") else {
            self.init(path: pathAndQuery)
            return
        }
        self.init(path: String(pathAndQuery[..<question]), query: String(pathAndQuery[pathAndQuery.index(after: question)...]))
    }

    /// The path, then `?` and the query when there is one, as registered.
    public var pathAndQuery: String { query.map { path + "?" + $0 } ?? path }
}

// MARK: - What the app receives

/// Text made of known parts and of values the server fills in at sign-in time (a code, the client's `state`),
/// which can be any non-empty text.
struct Template: Equatable {
    enum Piece: Equatable {
        case text(String)
        case anyNonEmpty
    }

    var pieces: [Piece]

    static func text(_ value: String) -> Template { Template(pieces: [.text(value)]) }

    /// The same template with `transform` applied to every known part.
    func mapText(_ transform: (String) -> String) -> Template {
        Template(
            pieces: pieces.map {
                if case .text(let value) = $0 { .text(transform(value)) } else { $0 }
            })
    }
}

/// Whether a pattern matches the URLs a callback receives: all of them, some, or none.
enum Match: Equatable {
    case always
    case sometimes
    case never

    /// Every part must match: `never` when one never does, `always` when all always do.
    static func all(_ parts: [Match]) -> Match {
        if parts.contains(.never) { return .never }
        return parts.allSatisfy { $0 == .always } ? .always : .sometimes
    }
}

/// The URL an app opens at a link callback after a successful sign-in (docs/association.md#callback-url):
/// the registered URI, then `code`, `state` and `iss` appended to its query the way the server's
/// `redirectLocation` does (`?`, or `&` after a registered query, nothing after a bare `?`; RFC 6749 §4.1.2,
/// RFC 9207 §2), and no fragment. The three values are unknown here and stand for any non-empty text.
struct ReceivedURL {
    /// The parameters a successful authorization response appends, in order.
    static let responseItems = ["code", "state", "iss"]

    let path: String
    /// The whole query, as sent (percent-encoded).
    let query: Template
    /// The query items in order, names and values percent-decoded as `NSURLQueryItem` gives them; an item
    /// with no `=` has the empty value.
    let items: [(name: String, value: Template)]

    init(_ callback: LinkCallback) {
        path = callback.path
        var pieces: [Template.Piece] = []
        var items: [(name: String, value: Template)] = []
        if let registered = callback.query {
            if !registered.isEmpty { pieces.append(.text(registered + "&")) }
            for segment in registered.split(separator: "&") {
                let name = segment.prefix { $0 != "=" }
                let value = segment.dropFirst(name.count + 1)
                guard !name.isEmpty else { continue }
                items.append((percentDecoded(String(name)), .text(percentDecoded(String(value)))))
            }
        }
        for (index, name) in Self.responseItems.enumerated() {
            pieces.append(.text((index == 0 ? "" : "&") + name + "="))
            pieces.append(.anyNonEmpty)
            items.append((name, Template(pieces: [.anyNonEmpty])))
        }
        query = Template(pieces: pieces)
        self.items = items
    }
}

// MARK: - One rule

/// One URL rule of an association file: a modern AASA `components` entry (docs/association.md#aasa-formats) or
/// an Android `dynamic_app_link_components` entry (docs/association.md#assetlinks-dynamic-rules). Each key
/// given must match; a key left out matches everything.
struct LinkRule {
    enum Query {
        /// No `?` key.
        case any
        /// A string `?`: a pattern over the whole query.
        case whole(String)
        /// A dictionary `?`: item name → pattern over that item's value.
        case items([(name: String, pattern: String)])
    }

    let path: String?
    let query: Query
    let fragment: String?
    let exclude: Bool
    let caseSensitive: Bool
    let percentEncoded: Bool

    /// Reads a component; `nil` when it is malformed: not an object, a `/` or `#` that is not a string, a `?`
    /// that is neither a string (when `queryString` allows one) nor an object of strings, or an `exclude`
    /// that is not a boolean.
    init?(_ component: JSONValue, caseSensitive: Bool, percentEncoded: Bool, queryString: Bool) {
        guard component.isObject else { return nil }
        if let value = component["exclude"] {
            guard let flag = value.boolValue else { return nil }
            exclude = flag
        } else {
            exclude = false
        }
        func pattern(_ key: String) -> String?? {
            guard let value = component[key] else { return .some(nil) }
            return value.stringValue.map { .some($0) }
        }
        guard let path = pattern("/"), let fragment = pattern("#") else { return nil }
        self.path = path
        self.fragment = fragment
        switch component["?"] {
        case nil: query = .any
        case .string(let text)? where queryString: query = .whole(text)
        case .object(let members)?:
            var items: [(name: String, pattern: String)] = []
            for (name, value) in members {
                guard let text = value.stringValue else { return nil }
                items.append((name, text))
            }
            query = .items(items)
        default: return nil
        }
        self.caseSensitive = caseSensitive
        self.percentEncoded = percentEncoded
    }

    /// Whether this rule matches the URLs `url` stands for.
    ///
    /// The path, the fragment and a whole-query pattern are compared as sent when `percentEncoded`, else
    /// percent-decoded. A dictionary names query items: every item of that name must match its pattern, an
    /// item the URL lacks matches as the empty string, items it does not name are ignored, and names and
    /// values are compared percent-decoded (as `NSURLQueryItem` gives them) whatever `percentEncoded` says.
    /// `caseSensitive: false` compares every pattern and value ignoring case; item names are compared exactly.
    func match(_ url: ReceivedURL) -> Match {
        let fold: (String) -> String = caseSensitive ? { $0 } : { $0.lowercased() }
        let decode: (String) -> String = percentEncoded ? { $0 } : { percentDecoded($0) }
        var parts: [Match] = [
            Wildcard.match(fold(path ?? "*"), .text(fold(decode(url.path)))),
            Wildcard.match(fold(fragment ?? "*"), .text("")),
        ]
        switch query {
        case .any: break
        case .whole(let pattern):
            parts.append(Wildcard.match(fold(pattern), url.query.mapText { fold(decode($0)) }))
        case .items(let patterns):
            for (name, pattern) in patterns {
                let values = url.items.filter { $0.name == name }.map(\.value)
                parts += (values.isEmpty ? [.text("")] : values).map { Wildcard.match(fold(pattern), $0.mapText(fold)) }
            }
        }
        return Match.all(parts)
    }
}

/// How an ordered list of rules, first match wins, treats a callback's URLs.
enum RulesVerdict: Equatable {
    /// An including rule (1-based) matches every URL before any exclusion can.
    case handled(rule: Int)
    /// An excluding rule (1-based) matches the URLs (`always`), or some of them, before an including rule
    /// matches them all.
    case excluded(rule: Int, always: Bool)
    /// No rule matches every URL; `partly` names the first including rule that matches only some of them.
    case unmatched(partly: Int?)

    /// Runs `rules` (with their 1-based numbers) in order over `url`. A rule that matches only some of the
    /// URLs decides for those: an exclusion then counts as excluding, an inclusion is passed over, so a later
    /// rule must still cover the rest.
    static func firstMatch(_ rules: [(number: Int, rule: LinkRule)], _ url: ReceivedURL) -> RulesVerdict {
        var partly: Int?
        for (number, rule) in rules {
            switch (rule.match(url), rule.exclude) {
            case (.never, _): continue
            case (.always, false): return .handled(rule: number)
            case (.always, true): return .excluded(rule: number, always: true)
            case (.sometimes, true): return .excluded(rule: number, always: false)
            case (.sometimes, false): if partly == nil { partly = number }
            }
        }
        return .unmatched(partly: partly)
    }
}

// MARK: - Wildcards

/// Apple's and Android's wildcards (docs/association.md#aasa-formats): `*` matches any run of characters
/// (also none), `?` exactly one; every other character matches itself.
enum Wildcard {
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern.unicodeScalars)
        let t = Array(text.unicodeScalars)
        var pi = 0
        var ti = 0
        var star: Int?
        var resume = 0
        while ti < t.count {
            if pi < p.count, p[pi] == "?" || p[pi] == t[ti] && p[pi] != "*" {
                pi += 1
                ti += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi
                resume = ti
                pi += 1
            } else if let star {
                pi = star + 1
                resume += 1
                ti = resume
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }

    /// Whether `pattern` matches every text `subject` stands for, some of them, or none.
    ///
    /// Decided exactly over two automata: the pattern's (position in the pattern) and the template's, in which
    /// a value the server fills in is one character then any run. Characters absent from the pattern behave
    /// alike, so one stands for them all. A template with no unknown value is a plain `matches`. Past
    /// `stateLimit` explored states (no real file comes near) the answer errs to `sometimes` or `never`.
    static func match(_ pattern: String, _ subject: Template) -> Match {
        if case .text(let text)? = subject.pieces.first, subject.pieces.count == 1 {
            return matches(pattern, text) ? .always : .never
        }
        let automaton = PatternAutomaton(pattern)
        var tokens: [Token] = []
        for piece in subject.pieces {
            switch piece {
            case .text(let text): tokens += text.unicodeScalars.map(Token.character)
            case .anyNonEmpty: tokens += [.one, .run]
            }
        }
        let alphabet: [Unicode.Scalar?] = Array(Set(automaton.literals)).sorted { $0.value < $1.value } + [nil]
        func closure(_ k: Int) -> [Int] {
            var out = [k]
            var index = k
            while index < tokens.count, tokens[index] == .run {
                index += 1
                out.append(index)
            }
            return out
        }
        func moves(_ k: Int) -> [(symbol: Unicode.Scalar?, next: Int)] {
            guard k < tokens.count else { return [] }
            switch tokens[k] {
            case .character(let scalar): return [(scalar, k + 1)]
            case .one: return alphabet.map { ($0, k + 1) }
            case .run: return alphabet.map { ($0, k) }
            }
        }
        let start = automaton.closure([0])

        // Some text: a path through both automata to their ends.
        var seen: Set<[Int]> = []
        var queue: [[Int]] = closure(0).flatMap { k in start.map { [k, $0] } }
        var some = false
        while let pair = queue.popLast(), !some, seen.count < stateLimit {
            guard seen.insert(pair).inserted else { continue }
            if pair[0] == tokens.count, pair[1] == automaton.end { some = true }
            for (symbol, next) in moves(pair[0]) {
                for state in automaton.step([pair[1]], symbol) { queue += closure(next).map { [$0, state] } }
            }
        }
        guard some else { return .never }

        // Every text: no path reaches the template's end while the pattern cannot be at its end.
        var seenSets: Set<[Int]> = []
        var pending: [[Int]] = closure(0).map { [$0] + start.sorted() }
        while let item = pending.popLast() {
            guard seenSets.insert(item).inserted else { continue }
            if seenSets.count >= stateLimit { return .sometimes }
            let k = item[0]
            let states = Set(item.dropFirst())
            if k == tokens.count, !states.contains(automaton.end) { return .sometimes }
            for (symbol, next) in moves(k) {
                let after = automaton.step(states, symbol).sorted()
                pending += closure(next).map { [$0] + after }
            }
        }
        return .always
    }

    static let stateLimit = 200_000

    enum Token: Equatable {
        case character(Unicode.Scalar)
        /// Exactly one character, any.
        case one
        /// Any run of characters, also none.
        case run
    }

    /// A pattern as an automaton whose states are positions in it (`end` when all of it is matched).
    struct PatternAutomaton {
        let scalars: [Unicode.Scalar]

        init(_ pattern: String) { scalars = Array(pattern.unicodeScalars) }

        var end: Int { scalars.count }
        var literals: [Unicode.Scalar] { scalars.filter { $0 != "*" && $0 != "?" } }

        /// The states plus those a `*` lets through without consuming.
        func closure(_ states: Set<Int>) -> Set<Int> {
            var out = states
            for state in states {
                var index = state
                while index < scalars.count, scalars[index] == "*" {
                    index += 1
                    out.insert(index)
                }
            }
            return out
        }

        /// The states after reading `symbol` (`nil`: a character the pattern never names).
        func step(_ states: Set<Int>, _ symbol: Unicode.Scalar?) -> Set<Int> {
            var out: Set<Int> = []
            for state in states where state < scalars.count {
                switch scalars[state] {
                case "*": out.insert(state)
                case "?": out.insert(state + 1)
                case let literal where literal == symbol: out.insert(state + 1)
                default: break
                }
            }
            return closure(out)
        }
    }
}

/// Decodes `%XX` escapes as UTF-8 (for `percentEncoded: false` patterns and query items); invalid escapes stay
/// as written.
func percentDecoded(_ text: String) -> String {
    let bytes = Array(text.utf8)
    var out: [UInt8] = []
    var index = 0
    while index < bytes.count {
        if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
            let high = hexValue(Unicode.Scalar(bytes[index + 1])), let low = hexValue(Unicode.Scalar(bytes[index + 2]))
        {
            out.append(high << 4 | low)
            index += 3
        } else {
            out.append(bytes[index])
            index += 1
        }
    }
    return String(decoding: out, as: UTF8.self)
}
