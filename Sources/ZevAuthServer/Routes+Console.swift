import HTTPServer

extension Routes {
    /// The console (docs/console.md): its sign-in, its pages and actions, and its two static files.
    mutating func registerConsole() {
        let signIn = ConsoleSignIn(context: context)
        let console = ConsoleHandlers(context: context)
        add("GET", ConsolePages.stylesheetPath) { _, _ in
            ConsolePages.asset(ConsolePages.stylesheet, contentType: "text/css; charset=utf-8")
        }
        add("GET", ConsolePages.scriptPath) { _, _ in
            ConsolePages.asset(ConsolePages.script, contentType: "text/javascript; charset=utf-8")
        }
        add("GET", "/console") { request, _ in try console.projectsPage(request) }
        add("GET", "/console/callback") { request, _ in try signIn.callback(request) }
        add("POST", "/console/signout") { request, _ in try signIn.signOut(request) }
        add("GET", "/console/signed-out") { _, _ in
            ConsolePages.message(
                title: "Signed out", heading: "You are signed out of the console", "Your console session has ended.", status: 200,
                link: ("/console", "Sign in to the console again"))
        }
        add("GET", "/console/projects") { request, _ in try console.projectsPage(request) }
        add("POST", "/console/projects") { request, _ in try console.createProject(request) }
        add("GET", "/console/accounts") { request, _ in try console.accountsPage(request) }
        add("POST", "/console/accounts") { request, _ in try console.searchAccounts(request) }
        add("POST", "/console/accounts/{user}/close") { request, p in try console.closeAccount(request, userID: p["user"] ?? "") }
        add("GET", "/console/signing-keys") { request, _ in try console.signingKeysPage(request) }
        add("POST", "/console/signing-keys/rotate") { request, _ in try console.rotateSigningKeys(request) }
        add("GET", "/console/providers") { request, _ in try console.providersPage(request) }
        add("POST", "/console/providers") { request, _ in try console.createProvider(request) }
        add("GET", "/console/providers/{provider}") { request, p in try console.providerPage(request, id: p["provider"] ?? "") }
        add("POST", "/console/providers/{provider}") { request, p in try console.saveProvider(request, id: p["provider"] ?? "") }
        add("POST", "/console/providers/{provider}/delete") { request, p in try console.deleteProvider(request, id: p["provider"] ?? "") }

        let project = "/console/projects/{id}"
        let env = project + "/{env}"
        add("GET", project + "/members") { request, p in try console.membersPage(request, id: p["id"] ?? "") }
        add("POST", project + "/members") { request, p in try console.addMember(request, id: p["id"] ?? "") }
        add("POST", project + "/members/{user}") { request, p in
            try console.saveMember(request, id: p["id"] ?? "", userID: p["user"] ?? "")
        }
        add("POST", project + "/members/{user}/remove") { request, p in
            try console.removeMember(request, id: p["id"] ?? "", userID: p["user"] ?? "")
        }
        add("GET", env + "/domains") { request, p in try console.domainsPage(request, id: p["id"] ?? "", env: p["env"] ?? "") }
        add("POST", env + "/domains") { request, p in try console.addDomain(request, id: p["id"] ?? "", env: p["env"] ?? "") }
        add("POST", env + "/domains/{domain}/verify") { request, p in
            try console.verifyDomain(request, id: p["id"] ?? "", env: p["env"] ?? "", domain: p["domain"] ?? "")
        }
        add("POST", env + "/callbacks") { request, p in try console.addCallback(request, id: p["id"] ?? "", env: p["env"] ?? "") }
        add("POST", env + "/callbacks/{callback}/delete") { request, p in
            try console.deleteCallback(request, id: p["id"] ?? "", env: p["env"] ?? "", callbackID: p["callback"] ?? "")
        }
        add("GET", env + "/apps") { request, p in try console.appsPage(request, id: p["id"] ?? "", env: p["env"] ?? "") }
        add("POST", env + "/apps") { request, p in try console.addApp(request, id: p["id"] ?? "", env: p["env"] ?? "") }
        add("POST", env + "/apps/{app}/check") { request, p in
            try console.checkApp(request, id: p["id"] ?? "", env: p["env"] ?? "", appID: p["app"] ?? "")
        }
        add("POST", env + "/apps/{app}/remove") { request, p in
            try console.removeApp(request, id: p["id"] ?? "", env: p["env"] ?? "", appID: p["app"] ?? "")
        }
        add("GET", env + "/sessions") { request, p in try console.sessionsPage(request, id: p["id"] ?? "", env: p["env"] ?? "") }
        add("POST", env + "/sessions") { request, p in try console.saveSessions(request, id: p["id"] ?? "", env: p["env"] ?? "") }
        add("POST", env + "/providers") { request, p in
            try console.saveShownProviders(request, id: p["id"] ?? "", env: p["env"] ?? "")
        }
        add("GET", env + "/keys") { request, p in try console.keysPage(request, id: p["id"] ?? "", env: p["env"] ?? "") }
        add("POST", env + "/keys") { request, p in try console.createKey(request, id: p["id"] ?? "", env: p["env"] ?? "") }
        add("POST", env + "/keys/{key}/revoke") { request, p in
            try console.revokeKey(request, id: p["id"] ?? "", env: p["env"] ?? "", keyID: p["key"] ?? "")
        }
        add("GET", env + "/activity") { request, p in try console.activityPage(request, id: p["id"] ?? "", env: p["env"] ?? "") }
    }
}
