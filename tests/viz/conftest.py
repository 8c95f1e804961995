"""Fixtures for the viz tests."""

import comm
import pytest
from comm.base_comm import BaseComm


class _ConnectedComm(BaseComm):
    """A comm as a widget has it in a kernel with a front end attached; what it would publish goes nowhere."""

    kernel = "connected"  # ipywidgets sends a widget's state only through a comm whose kernel is not None
    opened: list[dict] | None = None  # the front_end fixture's record of the states widgets opened with

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        if msg_type == "comm_open" and self.opened is not None:
            self.opened.append(data["state"])


@pytest.fixture
def front_end(monkeypatch):
    """Widgets made in the test send their state as in a notebook.

    Without it, what a widget sends depends on the other tests its process ran: once anything has imported
    ``ipykernel.ipkernel`` (a notebook test, say), ``comm.create_comm`` makes comms with no kernel, and
    ipywidgets then sends nothing at all. Yields the states the widgets opened with, in order.
    """
    opened: list[dict] = []
    monkeypatch.setattr(_ConnectedComm, "opened", opened)
    monkeypatch.setattr(comm, "create_comm", lambda **kwargs: _ConnectedComm(**kwargs))
    return opened
