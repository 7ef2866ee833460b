import HTTPServer

extension Routes {
    /// The hosted upstream sign-in (docs/federation.md, "Hosted sign-in"): "Continue with NAME", the
    /// callback (GET, and Apple's form_post), the link confirmation, unlinking, and Apple's logo.
    mutating func registerUpstream() {
        let upstream = UpstreamHandlers(context: context)
        let logo = Array(UpstreamPages.appleLogo.utf8)
        add("GET", UpstreamPages.appleLogoPath) { _, _ in
            HTTPResponse(
                status: 200,
                headers: HTTPHeaders([
                    ("Content-Type", "image/svg+xml"), ("Cache-Control", "public, max-age=86400"), ("X-Content-Type-Options", "nosniff"),
                ]),
                body: logo)
        }
        add("POST", UpstreamHandlers.startPath) { request, _ in try upstream.start(request) }
        add("GET", UpstreamHandlers.callbackPath) { request, _ in try upstream.callback(request) }
        add("POST", UpstreamHandlers.callbackPath) { request, _ in try upstream.callbackPost(request) }
        add("GET", UpstreamHandlers.linkPath) { request, _ in try upstream.linkPage(request) }
        add("POST", UpstreamHandlers.linkPath) { request, _ in try upstream.link(request) }
        add("POST", UpstreamHandlers.unlinkPath) { request, _ in try upstream.unlink(request) }
    }
}
