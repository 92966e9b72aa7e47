# pdtopo stand-in for tokenspeed.runtime.pd.utils (which imports
# torch.distributed and the scheduler): the names the PD managers use
# (PageTransferMetadata: the v1 commit's entities and receiver).
import dataclasses
import threading
from collections import deque
from enum import Enum


class DisaggregationMode(Enum):
    NULL = "null"
    PREFILL = "prefill"
    DECODE = "decode"
    ENCODE = "encode"


class FastQueue:
    def __init__(self):
        self._items = deque()
        self._cond = threading.Condition()

    def put(self, item):
        with self._cond:
            self._items.append(item)
            self._cond.notify()

    def get(self):
        with self._cond:
            while not self._items:
                self._cond.wait()
            return self._items.popleft()


class StepCounter:
    COUNT_NUM_MAX = 2**62


@dataclasses.dataclass
class PageTransferMetadata:
    indices_are_local: bool
    page_transfer_mask: object
    page_local_indices: object = None
