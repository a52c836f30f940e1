"""Erasing a user: what to erase (targets), scrubbing every copy, and verifying nothing is left."""
