"""Fixtures for the viz tests."""

import comm
import pytest
from comm.base_comm import BaseComm


class _ConnectedComm(BaseComm):
    """A comm as a widget has it in a kernel with a front end attached; what it would publish goes nowhere."""

    kernel = "connected"  # ipywidgets sends a widget's state only through a comm whose kernel is not None

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        pass


@pytest.fixture
def front_end(monkeypatch):
    """Widgets made in the test send their state as in a notebook.

    Without it, what a widget sends depends on the other tests its process ran: once anything has imported
    ``ipykernel.ipkernel`` (a notebook test, say), ``comm.create_comm`` makes comms with no kernel, and
    ipywidgets then sends nothing at all.
    """
    monkeypatch.setattr(comm, "create_comm", lambda **kwargs: _ConnectedComm(**kwargs))
