"""Errors raised by fasttree."""

import sys


class NotFittedError(ValueError, AttributeError):
    """Raised when an estimator is used before ``fit``.

    Inherits from ``ValueError`` and ``AttributeError`` like scikit-learn's ``NotFittedError``, so
    code that catches either keeps working.  When scikit-learn is already imported, the error
    raised is also an instance of ``sklearn.exceptions.NotFittedError`` (see
    :func:`not_fitted_error`).
    """


_COMBINED = {}


def not_fitted_error(message):
    """A :class:`NotFittedError` that is also scikit-learn's when scikit-learn is loaded.

    scikit-learn is never imported here: if the user's process has not imported it, nobody can
    be catching its exception class.
    """
    sklearn_exceptions = sys.modules.get("sklearn.exceptions")
    if sklearn_exceptions is None:
        return NotFittedError(message)
    base = sklearn_exceptions.NotFittedError
    if base not in _COMBINED:
        _COMBINED[base] = type("NotFittedError", (NotFittedError, base),
                               {"__module__": __name__, "__doc__": NotFittedError.__doc__})
    return _COMBINED[base](message)


class DataConversionWarning(UserWarning):
    """Warns that the input was converted (e.g. a column-vector ``y`` flattened).

    Like :func:`not_fitted_error`, :func:`data_conversion_warning` gives an instance of
    scikit-learn's class too when scikit-learn is loaded.
    """


def data_conversion_warning():
    """The warning class to emit: also scikit-learn's when scikit-learn is loaded."""
    sklearn_exceptions = sys.modules.get("sklearn.exceptions")
    if sklearn_exceptions is None:
        return DataConversionWarning
    base = sklearn_exceptions.DataConversionWarning
    if base not in _COMBINED:
        _COMBINED[base] = type("DataConversionWarning", (DataConversionWarning, base),
                               {"__module__": __name__, "__doc__": DataConversionWarning.__doc__})
    return _COMBINED[base]
