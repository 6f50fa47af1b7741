"""Accounts in the browser: passwords (argon2id), sign-in with a rate limit, the page's
sessions, the operator's first-run creation, staff invitations."""
