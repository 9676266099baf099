"""The contract between the grower and a splitter, and what each splitter can take.

:class:`~fasttree.grower.TreeGrower` grows a tree level by level through a splitter, an object
that owns the working layout of the rows (presorted features, bins, a sparse matrix's entries,
or column shards on other machines) and the kernels that read and move it.  :class:`Splitter`
writes down everything the grower uses; a new layout implements it and the grower, the pruners
and the estimators work on it unchanged.

What a splitter can take is data, not code: :attr:`Splitter.capabilities` lists the
:data:`NEEDS` it serves, :attr:`Splitter.one_output_only` those it serves for one output only.
The estimators ask the splitter class a fit would use (:func:`refused_needs`) before fitting,
so a refusal names the parameter, and scikit-learn's tags say the same as ``fit``.
"""

from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

#: what a fit may need of a splitter beyond numeric features and the basic criteria (gini,
#: entropy, squared error), with the words an error message names it by
NEEDS = {
    "sparse": "sparse X",
    "several_outputs": "several outputs",
    "categorical": "categorical features",
    "gain_ratio": "criterion='gain_ratio'",
    "c45_rules": "C4.5's rules",
    "poisson": "criterion='poisson'",
    "absolute_error": "criterion='absolute_error'",
    "monotonic_cst": "monotonic_cst",
}


@runtime_checkable
class Splitter(Protocol):
    """What :class:`~fasttree.grower.TreeGrower` uses of a splitter.

    Nodes are ``[start, end)`` position ranges of the splitter's layout, given as arrays
    ``start`` and ``end`` of shape (n_nodes,), int64: one batch of nodes (a level, or a node of
    best-first growth) per call.  Implementations: :class:`~fasttree.splitter.ExactSplitter`
    (presorted features), :class:`~fasttree.hist_splitter.HistSplitter` (bins),
    :class:`~fasttree.sparse_splitter.SparseSplitter` (a CSC matrix's entries) and
    :class:`~fasttree.sharded_splitter.ShardedSplitter` (column shards on Dask workers).

    Attributes
    ----------
    capabilities : frozenset of str
        The :data:`NEEDS` the splitter serves (a class attribute).
    one_output_only : frozenset of str
        Among ``capabilities``, those served for one output only (a class attribute).
    choice : str
        How a user chooses this splitter, as an error message names it (a class attribute).
    remedy : str
        What to do instead when it refuses a need, for the error message (a class attribute).
    n_features, n_samples : int
        ``n_samples``: the layout's rows, of every tree.
    tree_offsets : ndarray of shape (n_trees + 1,), int64
        The layout holds one tree's rows or several trees' (a forest's samples, each its own
        block): tree ``k``'s root is the range ``[tree_offsets[k], tree_offsets[k + 1])``.  One
        tree: ``[0, n_samples]`` (:func:`one_tree`).
    tree_weights : ndarray of shape (n_trees,), float64
        Each root's weight (its rows with unit weights).
    missing_features : ndarray of shape (n_features,), bool
        Features with missing values in the training data.
    timings : dict of str to float
        Seconds per phase (``presort``, ``search``, ``partition``, ``node_stats``, ...), which the
        grower reports as the estimator's ``fit_timings_``.
    category_map : ndarray of int32
        The category -> branch maps of every categorical split so far, one after another
        (:meth:`describe_categorical` gives each split's offset and length).
    """

    capabilities: ClassVar[frozenset]
    one_output_only: ClassVar[frozenset]
    choice: ClassVar[str]
    remedy: ClassVar[str]
    n_features: int
    n_samples: int
    tree_offsets: np.ndarray
    tree_weights: np.ndarray
    missing_features: np.ndarray
    timings: dict
    category_map: np.ndarray

    def node_stats(self, start, end, feature):
        """Target statistics of each node, shape (n_nodes, n_stats), float64, read from the
        rows of ``feature`` (n_nodes,) (see :class:`~fasttree.splitter.ExactSplitter`)."""

    def non_constant(self, start, end):
        """(n_features, n_nodes) boolean mask: the features not constant in each node."""

    def find_splits(self, start, end, stats, mask, bounds=None, draws=None):
        """A :class:`~fasttree.kernels.SplitRecord` with the best split of every unmasked
        (feature, node) pair; ``mask`` (n_features, n_nodes) uint8, ``bounds`` (n_nodes, 2) each
        node's value range under monotonicity constraints, or None; ``draws`` the nodes'
        random thresholds' positions and missing sides (``uniform``, ``coin``, of
        :func:`~fasttree.kernels.draws.node_draws`) when the splitter was built with random
        thresholds, else None.  A splitter draws nothing itself: every random choice of a
        node is a function of the node's key, which the grower keeps."""

    def describe_categorical(self, start, end, stats, feature, kind, cut, missing_branch,
                             subset_class):
        """Category maps of the chosen categorical splits, appended to :attr:`category_map`;
        returns their offsets and lengths into it."""

    def is_prefix(self, kind, n_missing, missing_branch):
        """Boolean (n_nodes,): splits whose left child is a prefix of the split feature's rows
        (moved by :meth:`partition_prefix`, not by :meth:`split`)."""

    def split(self, start, end, feature, kind, threshold, missing_branch, n_branches, n_left,
              n_missing, category_offset, category_n_codes):
        """Route and move the rows of the splits that are not prefixes; returns the split
        nodes' ``(start, end)`` (shifted if copies of rows grew the layout) and the rows of
        every branch, nodes in order, branches in order."""

    def partition_prefix(self, start, end, feature, n_left):
        """Move the rows of prefix splits: each node's left child first, in every feature."""


def one_tree(n_samples, root_weight):
    """``tree_offsets`` and ``tree_weights`` of a layout holding one tree's rows."""
    return (np.array([0, n_samples], dtype=np.int64),
            np.array([root_weight], dtype=np.float64))


def refused_needs(splitter_class, needs, *, several_outputs=False):
    """The ``needs`` (names of :data:`NEEDS`) that ``splitter_class`` does not serve.

    Parameters
    ----------
    splitter_class : type
        A class implementing :class:`Splitter`.
    needs : iterable of str
        What the fit needs.
    several_outputs : bool, default=False
        Whether ``y`` has several outputs (then :attr:`Splitter.one_output_only` are refused
        too).

    Returns
    -------
    list of str
        The refused names, in the order of ``needs``.
    """
    unknown = set(needs) - NEEDS.keys()
    if unknown:
        raise ValueError(f"unknown needs {sorted(unknown)}; known: {list(NEEDS)}")
    served = splitter_class.capabilities
    if several_outputs:
        served = served - splitter_class.one_output_only
    return [need for need in needs if need not in served]
