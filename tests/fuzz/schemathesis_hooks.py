"""Schemathesis hooks for tests/fuzz/schemathesis.test.ts: every request carries the fuzz user's Bearer session.

The token comes from the test's token issuer (FUZZ_TOKEN_URL), which opens a fresh session for the signed-in fuzz
user; it is fetched again every second, so an operation that ends the session (sign-out, a password change) does
not leave the rest of the run signed out.
"""
import os
import urllib.request

import schemathesis

TOKEN_URL = os.environ["FUZZ_TOKEN_URL"]


@schemathesis.auth(refresh_interval=1)
class FuzzUserSession:
    def get(self, case, ctx):
        with urllib.request.urlopen(TOKEN_URL, timeout=120) as response:
            return response.read().decode("utf-8").strip()

    def set(self, case, data, ctx):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"


# tus bodies (PATCH /api/uploads/tus/{id}) are plain bytes: send them as Schemathesis sends application/octet-stream
schemathesis.serializer.alias("application/offset+octet-stream", "application/octet-stream")
