/// The passkey pages' one script, served same-origin at `GET /account/static/passkeys.js` (docs/passkeys.md,
/// "The passkey script"). It is progressive enhancement: without it, or in a browser without WebAuthn, the
/// pages work as before and the passkey buttons stay `hidden`.
///
/// What it reads from the page: `<main id="passkey-context" data-csrf data-request>` (the form token every
/// JSON body carries as `csrf`; the pending sign-in's `request`, absent or empty for a sign-in to /account),
/// the buttons `#passkey-signin` (the sign-in page) and `#passkey-create` (/account and the interstitial
/// `/account/passkeys/offer`), the optional name input `#passkey-name`, the error area `#passkey-error`
/// (`role="alert"`) and the sign-in form's hidden `#passkey-capable` field.
///
/// What it does:
/// - Sign-in forms: sets `#passkey-capable` to `1` when the device has a platform authenticator that verifies
///   the person (`PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable()`), so a password
///   sign-in may offer to create a passkey next.
/// - Sign-in page: shows "Sign in with a passkey"; when `PublicKeyCredential.isConditionalMediationAvailable()`
///   resolves true it fetches `/account/passkeys/signin/options` and starts `navigator.credentials.get` with
///   `mediation: "conditional"` (the email field's `autocomplete="username webauthn"` suggestions). The button
///   aborts that request (an `AbortController`) and runs a modal `get()` with fresh options. An assertion is
///   POSTed to `/account/passkeys/signin`; the browser goes to the answer's `redirect`. An autofill request
///   that ends before the person picks a passkey shows nothing: they asked for nothing yet.
/// - /account and the interstitial: shows "Create a passkey", which fetches `/account/passkeys/create/options`,
///   runs `navigator.credentials.create`, POSTs the credential with the optional name to
///   `/account/passkeys/create` and goes to the answer's `redirect`.
/// - Binary members travel as unpadded base64url (RFC 4648 §5) and are turned into `ArrayBuffer`s for the
///   WebAuthn API (`challenge`, `user.id`, the credential descriptors' `id`) and back.
/// - Every request is a same-origin `fetch` (`credentials: "same-origin"`, `Content-Type: application/json`,
///   the page's `csrf` in the body), so it fits the pages' CSP (`script-src 'self'; connect-src 'self'`).
/// - Every failure puts one sentence in `#passkey-error`, never an exception's name: the server's `message`
///   when it answered one, else by the WebAuthn error (`NotAllowedError` "The passkey request was cancelled or
///   timed out.", `InvalidStateError` when creating "This passkey is already registered.", `SecurityError`
///   "Passkeys can't be used on this address."), else "Something went wrong with the passkey. Try again or use
///   another way to sign in."
enum PasskeyScript {
    /// The script's text (UTF-8 JavaScript), served as `text/javascript`.
    static let source: String = #"""
        // ZevID passkeys on the hosted pages (docs/passkeys.md, "The passkey script"). Progressive enhancement: without
        // this script, or in a browser without WebAuthn, the pages work as before and the passkey buttons stay hidden.
        // Same origin only (CSP script-src 'self'; connect-src 'self'); no inline handler, no library.
        "use strict";
        (() => {
          const context = document.getElementById("passkey-context");
          if (!context || !window.PublicKeyCredential || !navigator.credentials) return;
          const csrf = context.dataset.csrf || "";
          const request = context.dataset.request || "";

          // A password sign-in offers to create a passkey next only when this device can hold one: the sign-in
          // form's hidden passkey_capable field says so (docs/passkeys.md, "The passkey script").
          const capable = document.getElementById("passkey-capable");
          if (capable && typeof PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable === "function") {
            PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable().then(
              (available) => {
                if (available) capable.value = "1";
              },
              () => {},
            );
          }

          // The sentences a person reads; never an exception's name or message (docs/passkeys.md, "Errors people see").
          const sentences = {
            NotAllowedError: "The passkey request was cancelled or timed out.",
            InvalidStateError: "This passkey is already registered.",
            SecurityError: "Passkeys can't be used on this address.",
            other: "Something went wrong with the passkey. Try again or use another way to sign in.",
          };

          // MARK: base64url (RFC 4648 §5, no padding) and ArrayBuffer

          function toBase64url(buffer) {
            const bytes = new Uint8Array(buffer);
            let binary = "";
            for (let i = 0; i < bytes.length; i += 0x8000) {
              binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
            }
            return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
          }

          function fromBase64url(text) {
            const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
            const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
            const bytes = new Uint8Array(binary.length);
            for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
            return bytes.buffer;
          }

          function withBuffers(descriptors) {
            return (descriptors || []).map((descriptor) => ({ ...descriptor, id: fromBase64url(descriptor.id) }));
          }

          // MARK: The server

          // The server refused with a sentence of its own ({"error", "message"}), shown as it is.
          class Refusal extends Error {
            constructor(sentence) {
              super("refused");
              this.sentence = sentence;
            }
          }

          // POSTs `body` (with the page's csrf token) as JSON and answers the JSON object of a 2xx answer; anything
          // else throws a Refusal carrying the server's "message" when it sent one.
          async function post(path, body) {
            const response = await fetch(path, {
              method: "POST",
              credentials: "same-origin",
              cache: "no-store",
              headers: { "Content-Type": "application/json", Accept: "application/json" },
              body: JSON.stringify({ ...body, csrf }),
            });
            let answer = null;
            try {
              answer = await response.json();
            } catch (_) {
              answer = null;
            }
            if (!response.ok || !answer || typeof answer !== "object") {
              throw new Refusal(answer && typeof answer.message === "string" ? answer.message : null);
            }
            return answer;
          }

          function withRequest(body) {
            return request ? { ...body, request } : body;
          }

          // Goes where the server said. A target that differs only by its fragment (/account#passkeys from /account)
          // would not load the page again, so that one is reloaded to show the new list.
          function follow(answer) {
            if (!answer || typeof answer.redirect !== "string" || answer.redirect === "") throw new Refusal(null);
            const target = new URL(answer.redirect, window.location.href);
            const here = new URL(window.location.href);
            if (target.origin === here.origin && target.pathname === here.pathname && target.search === here.search) {
              window.history.replaceState(null, "", target.href);
              window.location.reload();
            } else {
              window.location.assign(target.href);
            }
          }

          // MARK: What the person sees

          const errorArea = document.getElementById("passkey-error");

          function showError(error, ceremony) {
            let sentence = sentences.other;
            if (error instanceof Refusal) {
              sentence = error.sentence || sentences.other;
            } else if (error && error.name === "NotAllowedError") {
              sentence = sentences.NotAllowedError;
            } else if (error && error.name === "InvalidStateError" && ceremony === "create") {
              sentence = sentences.InvalidStateError;
            } else if (error && error.name === "SecurityError") {
              sentence = sentences.SecurityError;
            }
            if (!errorArea) return;
            errorArea.textContent = sentence;
            errorArea.hidden = false;
          }

          function clearError() {
            if (!errorArea) return;
            errorArea.textContent = "";
            errorArea.hidden = true;
          }

          function busy(button, isBusy) {
            button.disabled = isBusy;
            if (isBusy) button.setAttribute("aria-busy", "true");
            else button.removeAttribute("aria-busy");
          }

          // MARK: Signing in (WebAuthn Level 3 §5.1.4, discoverable credentials, conditional mediation)

          function requestOptions(answer) {
            const options = answer && answer.publicKey;
            if (!options || typeof options.challenge !== "string") throw new Refusal(null);
            const publicKey = { ...options, challenge: fromBase64url(options.challenge) };
            if (options.allowCredentials) publicKey.allowCredentials = withBuffers(options.allowCredentials);
            return publicKey;
          }

          function assertionJSON(credential) {
            const response = credential.response;
            const body = {
              id: credential.id,
              rawId: toBase64url(credential.rawId),
              type: credential.type,
              response: {
                clientDataJSON: toBase64url(response.clientDataJSON),
                authenticatorData: toBase64url(response.authenticatorData),
                signature: toBase64url(response.signature),
              },
            };
            if (response.userHandle) body.response.userHandle = toBase64url(response.userHandle);
            if (credential.authenticatorAttachment) body.authenticatorAttachment = credential.authenticatorAttachment;
            return body;
          }

          async function signIn(credential) {
            follow(await post("/account/passkeys/signin", withRequest({ credential: assertionJSON(credential) })));
          }

          const signInButton = document.getElementById("passkey-signin");
          if (signInButton) {
            let conditional = null; // { controller, settled } while the autofill request is pending
            let modal = false; // while the button's request runs

            // Autofill: the email field's passkey suggestions (autocomplete="username webauthn"). The request
            // waits until the person picks a passkey there, or until the button aborts it. Until a passkey is picked
            // the person has asked for nothing, so a request that ends before that (no passkey for this site, the
            // options not fetched) shows nothing: the password form and the button are still there.
            async function startConditional() {
              if (typeof PublicKeyCredential.isConditionalMediationAvailable !== "function") return;
              if (!(await PublicKeyCredential.isConditionalMediationAvailable()) || modal || conditional) return;
              const controller = new AbortController();
              const run = (async () => {
                let credential;
                try {
                  const publicKey = requestOptions(await post("/account/passkeys/signin/options", withRequest({})));
                  if (controller.signal.aborted) return;
                  credential = await navigator.credentials.get({ mediation: "conditional", publicKey, signal: controller.signal });
                } catch (_) {
                  return;
                }
                if (!credential || controller.signal.aborted) return;
                clearError();
                try {
                  await signIn(credential);
                } catch (error) {
                  showError(error, "get");
                }
              })();
              conditional = { controller, settled: run.catch(() => {}) };
            }

            // The button: a modal request with fresh options; a pending autofill request is aborted first, as a
            // browser allows one WebAuthn request at a time.
            async function signInWithButton() {
              if (modal) return;
              modal = true;
              clearError();
              busy(signInButton, true);
              const pending = conditional;
              conditional = null;
              if (pending) pending.controller.abort();
              try {
                if (pending) await pending.settled;
                const publicKey = requestOptions(await post("/account/passkeys/signin/options", withRequest({})));
                const credential = await navigator.credentials.get({ publicKey });
                if (!credential) throw new Refusal(null);
                await signIn(credential);
              } catch (error) {
                showError(error, "get");
                busy(signInButton, false);
                modal = false;
                startConditional().catch(() => {}); // the autofill suggestions again, which the button aborted
              }
            }

            signInButton.hidden = false;
            signInButton.addEventListener("click", () => {
              signInWithButton();
            });
            startConditional().catch(() => {});
          }

          // MARK: Creating (WebAuthn Level 3 §5.1.3)

          function creationOptions(answer) {
            const options = answer && answer.publicKey;
            if (!options || typeof options.challenge !== "string" || !options.user || typeof options.user.id !== "string") {
              throw new Refusal(null);
            }
            return {
              ...options,
              challenge: fromBase64url(options.challenge),
              user: { ...options.user, id: fromBase64url(options.user.id) },
              excludeCredentials: withBuffers(options.excludeCredentials),
            };
          }

          function attestationJSON(credential) {
            const response = credential.response;
            const body = {
              id: credential.id,
              rawId: toBase64url(credential.rawId),
              type: credential.type,
              response: {
                clientDataJSON: toBase64url(response.clientDataJSON),
                attestationObject: toBase64url(response.attestationObject),
              },
            };
            const transports = typeof response.getTransports === "function" ? response.getTransports() : null;
            if (Array.isArray(transports)) body.response.transports = transports;
            if (credential.authenticatorAttachment) body.authenticatorAttachment = credential.authenticatorAttachment;
            return body;
          }

          const createButton = document.getElementById("passkey-create");
          if (createButton) {
            const nameInput = document.getElementById("passkey-name");

            async function create() {
              clearError();
              busy(createButton, true);
              try {
                const publicKey = creationOptions(await post("/account/passkeys/create/options", withRequest({})));
                const credential = await navigator.credentials.create({ publicKey });
                if (!credential) throw new Refusal(null);
                const body = withRequest({ credential: attestationJSON(credential) });
                const name = nameInput ? nameInput.value.trim() : "";
                if (name) body.name = name;
                follow(await post("/account/passkeys/create", body));
              } catch (error) {
                showError(error, "create");
                busy(createButton, false);
              }
            }

            createButton.hidden = false;
            createButton.addEventListener("click", () => {
              create();
            });
          }
        })();
        """#
}
