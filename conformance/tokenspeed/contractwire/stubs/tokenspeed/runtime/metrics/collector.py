# pdtopo stand-in: metrics are off in the tools.
class KVTransferMetrics:
    def __init__(self, *args, **kwargs):
        pass

    def observe_kv_transfer_latency(self, seconds):
        pass
