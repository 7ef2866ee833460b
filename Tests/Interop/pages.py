"""What the interop clients read from the hosted pages, shared by authlib_client.py and openid_clients.py.

Both scripts drive the sign-in and consent forms like a scripted browser: they post back each form's hidden
fields (the pending sign-in, its CSRF token) with what a person would type.
"""
import html.parser


class HiddenFields(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.fields = {}

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "input" and attributes.get("type") == "hidden" and attributes.get("name"):
            self.fields[attributes["name"]] = attributes.get("value") or ""


def hidden_fields(page):
    """Every `<input type="hidden">` of the HTML `page`, name to value (the last of a repeated name)."""
    parser = HiddenFields()
    parser.feed(page)
    return parser.fields
