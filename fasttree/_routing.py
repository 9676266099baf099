"""scikit-learn's metadata routing for fasttree's estimators, without importing scikit-learn.

scikit-learn's estimators get ``set_fit_request``, ``set_score_request`` and
``get_metadata_routing`` from ``sklearn.utils._metadata_requests._MetadataRequester``, which
builds them when a class is defined.  fasttree's estimators cannot inherit from it (``import
fasttree`` needs only numpy and numba), so :class:`MetadataRequester` hands every call to that
same machinery, imported when the call is made.  The requests, their defaults (read from the
signatures of ``fit``, ``score``, ...), the checks (``RuntimeError`` unless
``sklearn.set_config(enable_metadata_routing=True)``, ``TypeError`` for an unknown name) and
the ``_metadata_request`` attribute that ``sklearn.base.clone`` copies are therefore
scikit-learn's own.
"""

#: the methods that have a ``set_{method}_request`` in scikit-learn (its ``SIMPLE_METHODS``)
#: and that a fasttree estimator may define with metadata; a class gets ``set_{method}_request``
#: only where its method takes some (as scikit-learn's estimators do)
REQUEST_METHODS = ("fit", "score", "predict", "predict_proba", "predict_log_proba", "transform")


def _requester():
    try:
        from sklearn.utils._metadata_requests import _MetadataRequester
    except ImportError as error:
        raise ImportError(
            "metadata routing is scikit-learn's: it needs scikit-learn installed") from error
    return _MetadataRequester


class _RequestMethod:
    """``set_{method}_request``: scikit-learn's ``RequestMethod`` for the owner class, built on
    access; an ``AttributeError`` where the class's ``method`` takes no metadata."""

    def __init__(self, method):
        self.method = method
        self.name = f"set_{method}_request"

    def __get__(self, instance, owner):
        try:
            from sklearn.utils._metadata_requests import RequestMethod
        except ImportError:  # so that hasattr, dir-walking tools and help() work without it
            raise AttributeError(
                f"{self.name} needs scikit-learn (metadata routing is scikit-learn's)") from None
        keys = sorted(_class_requests(owner, self.method))
        if not keys:
            raise AttributeError(f"{owner.__name__!r} object has no attribute {self.name!r}")
        return RequestMethod(self.method, keys).__get__(instance, owner)


def _class_requests(cls, method):
    """What ``method`` of ``cls`` requests before any ``set_{method}_request`` call, as
    scikit-learn reads it from the signature: ``{name: None, ...}``."""
    if hasattr(_requester(), "_get_class_level_metadata_request_values"):  # scikit-learn >= 1.8
        return cls._get_class_level_metadata_request_values(method)
    return getattr(cls._get_default_requests(), method).requests  # scikit-learn 1.3 - 1.7


def _forward_classmethod(name):
    """The classmethod ``name`` of scikit-learn's ``_MetadataRequester``, applied to the class
    it is called on (these helpers read the signatures of that class's methods)."""

    def forward(cls, *args, **kwargs):
        return getattr(_requester(), name).__func__(cls, *args, **kwargs)

    forward.__name__ = forward.__qualname__ = name
    return classmethod(forward)


class MetadataRequester:
    """``set_{method}_request`` and ``get_metadata_routing``, as scikit-learn's estimators have
    them (see the module's docstring)."""

    # the helpers scikit-learn's _get_metadata_request calls on the estimator: the first from
    # scikit-learn 1.8, the other two before
    _get_class_level_metadata_request_values = _forward_classmethod(
        "_get_class_level_metadata_request_values")
    _get_default_requests = _forward_classmethod("_get_default_requests")
    _build_request_for_signature = _forward_classmethod("_build_request_for_signature")

    def _get_metadata_request(self):
        return _requester()._get_metadata_request(self)

    def get_metadata_routing(self):
        """Get the metadata routing of this estimator (needs scikit-learn).

        Please check scikit-learn's User Guide on metadata routing for how the routing
        mechanism works.

        Returns
        -------
        routing : sklearn.utils.metadata_routing.MetadataRequest
            What metadata each method requests.  Before any ``set_{method}_request``
            call every metadata a method takes (``sample_weight`` of the trees' ``fit`` and
            ``score``) is ``None``: a meta-estimator given it raises, as with
            scikit-learn's own estimators.
        """
        return _requester().get_metadata_routing(self)


for _method in REQUEST_METHODS:
    setattr(MetadataRequester, f"set_{_method}_request", _RequestMethod(_method))
del _method
