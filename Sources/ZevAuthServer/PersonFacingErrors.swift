import Authorize

/// What an error page tells the person: what happened and what to do, in plain words, with no parameter
/// name, no code and no developer vocabulary. The standard `error` code and the developer's description go
/// behind the page's "Details for the app's developer" disclosure (docs/protocol.md#error-pages).
struct PersonFacingError: Sendable, Equatable {
    /// What happened: the page's heading, one sentence.
    let headline: String
    /// What to do now: one or two sentences.
    let advice: String
}

/// The one table of person-facing explanations, per error code (docs/protocol.md#error-pages), and the
/// named situations of the hosted flows that share the code `invalid_request` but need their own words.
enum PersonFacingErrors {
    private static let notSetUp = PersonFacingError(
        headline: "This app's sign-in link is not set up correctly.",
        advice: "Go back to the app and try again. If it happens again, the app's developer needs to fix it.")
    private static let notAllowedHere = PersonFacingError(
        headline: "This app can't sign in here yet.",
        advice: "Go back to the app and try again later. The app's developer needs to finish setting it up.")

    /// Every code the server can put on the wire, with what the person reads on a page that carries it.
    /// A code missing here falls back to `fallback` (a test checks that none is missing).
    static let table: [OAuthErrorCode: PersonFacingError] = [
        .invalidRequest: notSetUp,
        .invalidClient: notSetUp,
        .redirectURIRequired: notSetUp,
        .redirectURIMismatch: notSetUp,
        .invalidState: notSetUp,
        .pkceRequired: notSetUp,
        .pkceMethodUnsupported: notSetUp,
        .invalidCodeChallenge: notSetUp,
        .unsupportedResponseType: notSetUp,
        .unsupportedGrantType: notSetUp,
        .customSchemeNotAllowed: notAllowedHere,
        .nativeRedirectNotVerified: notAllowedHere,
        .loopbackRedirectNotAllowed: notAllowedHere,
        .nativeAppLimit: notAllowedHere,
        .nativeAppTeamMismatch: notAllowedHere,
        .accessDenied: PersonFacingError(
            headline: "You cancelled the sign-in.", advice: "Go back to the app if you want to try again."),
        .invalidGrant: PersonFacingError(
            headline: "This sign-in has expired or was already used.", advice: "Go back to the app and sign in again."),
        .pkceVerificationFailed: PersonFacingError(
            headline: "This sign-in could not be finished safely.", advice: "Go back to the app and sign in again."),
        .reauthenticationRequired: PersonFacingError(
            headline: "You need to sign in again.", advice: "Go back to the app and sign in again."),
        .invalidToken: PersonFacingError(
            headline: "You are signed out.", advice: "Go back to the app and sign in again."),
        .forbidden: PersonFacingError(
            headline: "You can't do this here.", advice: "Go back to the page you came from."),
        .notFound: PersonFacingError(
            headline: "There is nothing at this address.", advice: "Check the address, or go back to the app."),
        .conflict: PersonFacingError(
            headline: "This was changed at the same time somewhere else.", advice: "Reload the page and try again."),
        .serverError: PersonFacingError(
            headline: "Something went wrong on our side.", advice: "Try again in a few minutes."),
        .temporarilyUnavailable: PersonFacingError(
            headline: "The sign-in service is busy right now.", advice: "Wait a minute, then try again."),
        .requestNotSupported: notSetUp,
        .invalidNonce: notSetUp,
        .requestURINotSupported: notSetUp,
        .invalidRequestURI: PersonFacingError(
            headline: "This sign-in link has expired or was already used.", advice: "Go back to the app and start the sign-in again."),
        .loginRequired: PersonFacingError(
            headline: "You need to sign in first.", advice: "Go back to the app and sign in."),
        .consentRequired: PersonFacingError(
            headline: "This app needs your permission first.", advice: "Go back to the app and sign in again."),
        .interactionRequired: PersonFacingError(
            headline: "This sign-in needs you to finish it on a page.", advice: "Go back to the app and sign in again."),
        .insufficientScope: PersonFacingError(
            headline: "This app was not allowed to read your profile.", advice: "Go back to the app and sign in again."),
        .invalidDPoPProof: PersonFacingError(
            headline: "This app could not prove it is the one that signed you in.", advice: "Go back to the app and sign in again."),
        .useDPoPNonce: PersonFacingError(
            headline: "This app needs to repeat its request.", advice: "Go back to the app and try again."),
    ]

    /// What a page says for a code the table does not name.
    static let fallback = PersonFacingError(
        headline: "This sign-in can't continue.", advice: "Go back to the app and start again.")

    /// The explanation of `code`.
    static func explanation(for code: OAuthErrorCode) -> PersonFacingError { table[code] ?? fallback }

    /// The explanation of a wire spelling (`invalid_request`, `pkce_required`…); an unknown spelling gets
    /// `fallback`.
    static func explanation(forWire code: String) -> PersonFacingError {
        OAuthErrorCode(rawValue: code).map(explanation(for:)) ?? fallback
    }

    // MARK: Situations of the hosted flows (code `invalid_request`)

    /// The pending sign-in or MFA challenge a link names does not exist.
    static let linkNotValid = PersonFacingError(
        headline: "This sign-in link is not valid.", advice: "Go back to the app and start the sign-in again.")
    /// The pending sign-in or challenge is past its 10 minutes, or already completed.
    static let signInOver = PersonFacingError(
        headline: "This sign-in has expired or was already completed.", advice: "Go back to the app and start again.")
    /// The pending sign-in belongs to another browser (its binding cookie is missing or different).
    static let otherBrowser = PersonFacingError(
        headline: "This sign-in was started in another browser.",
        advice: "Finish it in the browser where it started, or go back to the app and start again here.")
    /// The form's CSRF token did not match.
    static let formExpired = PersonFacingError(
        headline: "This form expired.", advice: "Go back, reload the page and try again.")
    /// The form body did not decode.
    static let unreadableForm = PersonFacingError(
        headline: "The form could not be read: it holds a character no field accepts.", advice: "Go back and try again.")
    /// A logout request that cannot be followed (an unregistered `post_logout_redirect_uri` among them).
    static let signOutProblem = PersonFacingError(
        headline: "This sign-out can't continue.", advice: "Go back to the app and try again.")
    /// A consent form without a decision.
    static let noDecision = PersonFacingError(
        headline: "We didn't get your choice.", advice: "Go back and choose Continue or Cancel.")
}
