"""The one error of the markers: a marker that cannot be resolved, with the reason in words."""


class MarkerError(Exception):
    """A marker that is malformed or names what does not exist; str() is the reason that a
    checker prints after the file and line."""
