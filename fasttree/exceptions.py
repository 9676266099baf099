"""Errors raised by fasttree."""


class NotFittedError(ValueError, AttributeError):
    """Raised when an estimator is used before ``fit``.

    Inherits from ``ValueError`` and ``AttributeError`` like scikit-learn's ``NotFittedError``, so
    code that catches either keeps working.
    """
