# pdtopo stand-in for tokenspeed.runtime.pd.utils (which imports
# torch.distributed and the scheduler): the three names the PD managers use.
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
