import HTTPServer

extension Routes {
    /// The hosted account pages, TOTP and rate-limited sign-in.
    mutating func registerAccounts() {
        let accounts = AccountHandlers(context: context)
        let mfa = MFAFlow(context: context)
        add("GET", "/account") { request, _ in try accounts.accountPage(request) }
        add("GET", "/account/signup") { request, _ in try accounts.signUpPage(request) }
        add("POST", "/account/signup") { request, _ in try accounts.signUp(request) }
        add("GET", "/account/signin") { request, _ in try accounts.signInPage(request) }
        add("POST", "/account/signin") { request, _ in try accounts.signIn(request) }
        add("POST", "/account/apps/remove") { request, _ in try accounts.removeApp(request) }
        add("POST", "/account/signout") { request, _ in try accounts.signOut(request) }
        add("POST", "/account/signout-everywhere") { request, _ in try accounts.signOutEverywhere(request) }
        add("POST", "/account/password") { request, _ in try accounts.changePassword(request) }
        add("POST", "/account/totp/start") { request, _ in try accounts.startTOTP(request) }
        add("POST", "/account/totp/confirm") { request, _ in try accounts.confirmTOTP(request) }
        add("POST", "/account/close") { request, _ in try accounts.closeAccount(request) }
        registerEmailFlows(accounts: accounts)
        registerPasskeys(accounts: accounts)
        registerUpstream()
        add("GET", MFAFlow.path) { request, _ in try mfa.page(request) }
        add("POST", MFAFlow.path) { request, _ in try mfa.submit(request) }
        add("POST", "/v1/admin/users/{id}/close") { request, parameters in try accounts.closeUser(request, id: parameters["id"] ?? "") }
        add("POST", "/v1/admin/users/{id}/mfa/reset") { request, parameters in
            try accounts.resetMFA(request, id: parameters["id"] ?? "")
        }
    }
}

extension Routes {
    /// The email flows: the code page, "Forgot password?" and the address change (docs/protocol.md, "Email codes").
    mutating func registerEmailFlows(accounts: AccountHandlers) {
        let flow = EmailCodeFlow(context: context)
        add("GET", "/account/code") { request, _ in try flow.page(request) }
        add("POST", "/account/code") { request, _ in try flow.submit(request) }
        add("POST", "/account/code/resend") { request, _ in try flow.resend(request) }
        add("GET", "/account/reset") { request, _ in try flow.forgotPage(request) }
        add("POST", "/account/reset") { request, _ in try flow.forgot(request) }
        add("POST", "/account/reset/second-factor") { request, _ in try flow.resetSecondFactor(request) }
        add("POST", "/account/reset/password") { request, _ in try flow.resetPassword(request) }
        add("POST", "/account/email") { request, _ in try accounts.changeEmail(request) }
    }
}

extension Routes {
    /// Passkeys (docs/passkeys.md, "Endpoints"): the script, the JSON ceremonies, the account page's forms
    /// and the offer after a sign-in.
    mutating func registerPasskeys(accounts: AccountHandlers) {
        let passkeys = PasskeyHandlers(context: context)
        let script = Array(PasskeyScript.source.utf8)
        add("GET", Pages.passkeyScriptPath) { _, _ in
            HTTPResponse(
                status: 200,
                headers: HTTPHeaders([
                    ("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "public, max-age=3600"),
                    ("X-Content-Type-Options", "nosniff"),
                ]),
                body: script)
        }
        add("POST", "/account/passkeys/signin/options") { request, _ in try passkeys.signInOptions(request) }
        add("POST", "/account/passkeys/signin") { request, _ in try passkeys.signIn(request) }
        add("POST", "/account/passkeys/create/options") { request, _ in try passkeys.createOptions(request) }
        add("POST", "/account/passkeys/create") { request, _ in try passkeys.create(request) }
        add("POST", "/account/passkeys/rename") { request, _ in try accounts.renamePasskey(request) }
        add("POST", "/account/passkeys/remove") { request, _ in try accounts.removePasskey(request) }
        add("GET", "/account/passkeys/offer") { request, _ in try passkeys.offerPage(request) }
        add("POST", "/account/passkeys/offer/skip") { request, _ in try passkeys.skipOffer(request) }
    }
}
