import HTTPServer

extension Routes {
    /// The hosted account pages, TOTP and rate-limited sign-in (issue 4).
    mutating func registerAccounts() {
    }
}
