"""rmqlib: faithful Python models of Apache RocketMQ's consumer rebalance.

The core (``model``, ``hashring``, ``strategies``, ``allocation``, ``client``,
``broker``) is pure Python driven by explicit times; ``sim`` runs it in simpy
time and ``viz`` draws it with plotly and ipywidgets.
"""

from rmqlib.model import MessageQueue, java_sorted_cids, java_sorted_mqs

__version__ = "0.1.0"
__all__ = ["MessageQueue", "java_sorted_cids", "java_sorted_mqs", "__version__"]
